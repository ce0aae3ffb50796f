// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/layer_norm.hpp"

#include "engine/ops/device_tensor.hpp"

#include <cmath>

namespace prewarm::engine::ops {

LayerNorm::LayerNorm(FloatFormat format, std::size_t local_size)
  : m_format(format), m_local_size(local_size)
{
}

Defines
LayerNorm::defines() const
{
  Defines defines;
  add_precision_defines(defines, m_format);
  defines.set("LOCAL_SIZE", static_cast<std::int64_t>(m_local_size));
  return defines;
}

LaunchGeometry
LayerNorm::geometry(const Shape& shape) const
{
  return LaunchGeometry::linear(shape.rows * m_local_size, m_local_size);
}

Status
LayerNorm::run(Session& session, const Shape& shape, const DeviceBuffer& x, const DeviceBuffer& gamma,
               const DeviceBuffer& beta, const DeviceBuffer& out, float eps) const
{
  const std::size_t e = m_format.element_bytes();
  PW_TRY(require_shape("layer_norm", shape.rows > 0 && shape.cols > 0, "rows and cols must be positive"));
  PW_TRY(require_bytes("layer_norm", "x", x, shape.rows * shape.cols * e));
  PW_TRY(require_bytes("layer_norm", "gamma", gamma, shape.cols * e));
  PW_TRY(require_bytes("layer_norm", "beta", beta, shape.cols * e));
  PW_TRY(require_bytes("layer_norm", "out", out, shape.rows * shape.cols * e));
  PW_ASSIGN(Kernel kernel, session.kernel("layernorm.cl", "layer_norm", defines()));
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(x).buffer(gamma).buffer(beta).buffer(out)
                          .value(static_cast<cl_uint>(shape.cols)).value(eps));
}

std::vector<float>
LayerNorm::reference(const Shape& shape, std::span<const float> x, std::span<const float> gamma,
                     std::span<const float> beta, float eps)
{
  std::vector<float> out(shape.rows * shape.cols);
  for (std::size_t r = 0; r < shape.rows; ++r) {
    const float* row = x.data() + r * shape.cols;
    double mean = 0;
    for (std::size_t c = 0; c < shape.cols; ++c) {
      mean += row[c];
    }
    mean /= static_cast<double>(shape.cols);
    double variance = 0;
    for (std::size_t c = 0; c < shape.cols; ++c) {
      variance += (row[c] - mean) * (row[c] - mean);
    }
    variance /= static_cast<double>(shape.cols);
    const double rstd = 1.0 / std::sqrt(variance + eps);
    for (std::size_t c = 0; c < shape.cols; ++c) {
      out[r * shape.cols + c] =
        static_cast<float>((row[c] - mean) * rstd * gamma[c] + static_cast<double>(beta[c]));
    }
  }
  return out;
}

} // namespace prewarm::engine::ops
