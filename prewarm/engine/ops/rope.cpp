// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/rope.hpp"

#include "engine/ops/device_tensor.hpp"

#include <cmath>

namespace prewarm::engine::ops {

Rope::Rope(FloatFormat format) : m_format(format) {}

Defines
Rope::defines() const
{
  Defines defines;
  add_precision_defines(defines, m_format);
  return defines;
}

LaunchGeometry
Rope::geometry(const Shape& shape) const
{
  return LaunchGeometry::grid({shape.head_dim / 2, shape.heads, shape.tokens}, {0, 0, 0});
}

std::vector<float>
Rope::inverse_frequencies(std::size_t head_dim, double theta)
{
  std::vector<float> out(head_dim / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<float>(
      1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(head_dim)));
  }
  return out;
}

Status
Rope::run(Session& session, const Shape& shape, const DeviceBuffer& x, const DeviceBuffer& positions,
          const DeviceBuffer& inv_freq) const
{
  PW_TRY(require_shape("rope", shape.tokens > 0 && shape.heads > 0 && shape.head_dim >= 2,
                       "tokens, heads and head_dim must be positive"));
  PW_TRY(require_shape("rope", shape.head_dim % 2 == 0, "head_dim must be even"));
  PW_TRY(require_bytes("rope", "x", x, shape.tokens * shape.heads * shape.head_dim * m_format.element_bytes()));
  PW_TRY(require_bytes("rope", "positions", positions, shape.tokens * sizeof(cl_int)));
  PW_TRY(require_bytes("rope", "inv_freq", inv_freq, shape.head_dim / 2 * sizeof(float)));
  PW_ASSIGN(Kernel kernel, session.kernel("rope.cl", "rope", defines()));
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(x).buffer(positions).buffer(inv_freq)
                          .value(static_cast<cl_uint>(shape.heads))
                          .value(static_cast<cl_uint>(shape.head_dim)));
}

std::vector<float>
Rope::reference(const Shape& shape, std::span<const float> x, std::span<const int> positions,
                std::span<const float> inv_freq)
{
  std::vector<float> out(x.begin(), x.end());
  const std::size_t half = shape.head_dim / 2;
  for (std::size_t t = 0; t < shape.tokens; ++t) {
    for (std::size_t h = 0; h < shape.heads; ++h) {
      const std::size_t base = (t * shape.heads + h) * shape.head_dim;
      for (std::size_t i = 0; i < half; ++i) {
        const float angle = static_cast<float>(positions[t]) * inv_freq[i];
        const double c = std::cos(static_cast<double>(angle));
        const double s = std::sin(static_cast<double>(angle));
        const double first = x[base + i];
        const double second = x[base + i + half];
        out[base + i] = static_cast<float>(first * c - second * s);
        out[base + i + half] = static_cast<float>(second * c + first * s);
      }
    }
  }
  return out;
}

} // namespace prewarm::engine::ops
