// SPDX-License-Identifier: Apache-2.0
// LayerNorm over the last dimension (kernels/layernorm.cl): one work-group per
// row, -DLOCAL_SIZE=128 work-items reducing mean and variance in local memory.
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "engine/ops/precision.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace prewarm::engine::ops {

class LayerNorm
{
public:
  struct Shape
  {
    std::size_t rows = 0;
    std::size_t cols = 0;
  };

  explicit LayerNorm(FloatFormat format, std::size_t local_size = 128); // power of two
  Defines defines() const;
  LaunchGeometry geometry(const Shape& shape) const;
  // out[r] = (x[r] - mean) / sqrt(var + eps) * gamma + beta; gamma, beta: [cols]
  Status run(Session& session, const Shape& shape, const DeviceBuffer& x, const DeviceBuffer& gamma,
             const DeviceBuffer& beta, const DeviceBuffer& out, float eps) const;
  static std::vector<float> reference(const Shape& shape, std::span<const float> x,
                                      std::span<const float> gamma, std::span<const float> beta,
                                      float eps);

private:
  FloatFormat m_format;
  std::size_t m_local_size;
};

} // namespace prewarm::engine::ops
