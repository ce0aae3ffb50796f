// SPDX-License-Identifier: Apache-2.0
// GEMV for decode (kernels/gemv.cl): y[m] = W x[m] for the few rows m of a
// decode step, W stored [out][in] as linear layers store it. One work-group of
// -DLOCAL_SIZE=64 work-items per output element; they split K and reduce in
// local memory (64: two warps / one Intel EU thread group, enough to stream a
// row of K up to a few thousand).
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

// y[m][n] = sum_k x[m][k] w[n][k]
struct LinearShape
{
  std::size_t rows = 0; // m: tokens (decode: batch)
  std::size_t out = 0;  // n
  std::size_t in = 0;   // k
};

// Plain C++ y = x W^T in double, rounded to float.
std::vector<float> linear_reference(const LinearShape& shape, std::span<const float> x,
                                    std::span<const float> w);

class Gemv
{
public:
  explicit Gemv(FloatFormat format, std::size_t local_size = 64); // power of two
  Defines defines() const;
  LaunchGeometry geometry(const LinearShape& shape) const;
  Status run(Session& session, const LinearShape& shape, const DeviceBuffer& x, const DeviceBuffer& w,
             const DeviceBuffer& y) const;
  static std::vector<float> reference(const LinearShape& shape, std::span<const float> x,
                                      std::span<const float> w)
  {
    return linear_reference(shape, x, w);
  }

private:
  FloatFormat m_format;
  std::size_t m_local_size;
};

} // namespace prewarm::engine::ops
