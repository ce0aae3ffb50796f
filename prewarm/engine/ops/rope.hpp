// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding, NeoX "rotate half" layout as Llama/Qwen use it
// (kernels/rope.cl), in place on x[tokens][heads][head_dim] with one position
// per token (prefill: past .. past + n - 1; decode: each sequence's length).
// Global (head_dim / 2, heads, tokens), local chosen by the driver: the kernel
// has no local memory and its x size is rarely a multiple of a fixed tile.
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

class Rope
{
public:
  struct Shape
  {
    std::size_t tokens = 0;
    std::size_t heads = 0;
    std::size_t head_dim = 0; // even
  };

  explicit Rope(FloatFormat format);
  Defines defines() const;
  LaunchGeometry geometry(const Shape& shape) const;
  // theta^(-2i / head_dim) for i < head_dim / 2, computed in double and rounded
  // to float; upload once per model (the kernel's inv_freq argument).
  static std::vector<float> inverse_frequencies(std::size_t head_dim, double theta);
  // positions: int[tokens]; inv_freq: float[head_dim / 2]
  Status run(Session& session, const Shape& shape, const DeviceBuffer& x, const DeviceBuffer& positions,
             const DeviceBuffer& inv_freq) const;
  // Angle = float(position) * inv_freq in float, as the kernel; sin, cos and
  // the rotation in double.
  static std::vector<float> reference(const Shape& shape, std::span<const float> x,
                                      std::span<const int> positions, std::span<const float> inv_freq);

private:
  FloatFormat m_format;
};

} // namespace prewarm::engine::ops
