// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/w8a8.hpp"

#include "engine/ops/device_tensor.hpp"

#include <algorithm>
#include <cmath>

namespace prewarm::engine::ops {

QuantizedRows
quantize_rows(std::size_t rows, std::size_t cols, std::span<const float> x)
{
  QuantizedRows out;
  out.values.resize(rows * cols);
  out.scales.resize(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    float peak = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) {
      peak = std::max(peak, std::fabs(x[r * cols + c]));
    }
    // Float steps exactly as quantize_per_token writes them.
    const float inverse = peak > 0.0f ? 127.0f / peak : 0.0f;
    for (std::size_t c = 0; c < cols; ++c) {
      const float v = std::rint(x[r * cols + c] * inverse);
      out.values[r * cols + c] = static_cast<std::int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
    out.scales[r] = peak > 0.0f ? peak / 127.0f : 1.0f;
  }
  return out;
}

Defines
w8a8_defines(FloatFormat format, const W8A8Config& config)
{
  Defines defines;
  add_precision_defines(defines, format);
  defines.set("LOCAL_SIZE", static_cast<std::int64_t>(config.local_size));
  defines.set("TILE", static_cast<std::int64_t>(config.tile));
  return defines;
}

QuantizePerToken::QuantizePerToken(FloatFormat format, W8A8Config config) : m_format(format), m_config(config) {}

Defines
QuantizePerToken::defines() const
{
  return w8a8_defines(m_format, m_config);
}

LaunchGeometry
QuantizePerToken::geometry(std::size_t rows) const
{
  return LaunchGeometry::linear(rows * m_config.local_size, m_config.local_size);
}

Status
QuantizePerToken::run(Session& session, std::size_t rows, std::size_t cols, const DeviceBuffer& x,
                      const DeviceBuffer& q, const DeviceBuffer& scales) const
{
  constexpr std::string_view op = "quantize_per_token";
  PW_TRY(require_shape(op, rows > 0 && cols > 0, "rows and cols must be positive"));
  PW_TRY(require_bytes(op, "x", x, rows * cols * m_format.element_bytes()));
  PW_TRY(require_bytes(op, "q", q, rows * cols));
  PW_TRY(require_bytes(op, "scales", scales, rows * sizeof(float)));
  PW_ASSIGN(Kernel kernel, session.kernel("w8a8.cl", "quantize_per_token", defines()));
  return session.launch(kernel, geometry(rows),
                        KernelArgs().buffer(x).buffer(q).buffer(scales).value(static_cast<cl_uint>(cols)));
}

std::vector<float>
w8a8_reference(const LinearShape& shape, const QuantizedRows& activations, const QuantizedRows& weights)
{
  std::vector<float> y(shape.rows * shape.out);
  for (std::size_t m = 0; m < shape.rows; ++m) {
    for (std::size_t n = 0; n < shape.out; ++n) {
      std::int64_t sum = 0;
      for (std::size_t k = 0; k < shape.in; ++k) {
        sum += std::int64_t{activations.values[m * shape.in + k]} * std::int64_t{weights.values[n * shape.in + k]};
      }
      y[m * shape.out + n] = static_cast<float>(static_cast<double>(sum) * activations.scales[m] *
                                                weights.scales[n]);
    }
  }
  return y;
}

namespace {

Status
check_w8a8_arguments(std::string_view op, const LinearShape& shape, FloatFormat format, const DeviceBuffer& a,
                     const DeviceBuffer& a_scales, const DeviceBuffer& w, const DeviceBuffer& w_scales,
                     const DeviceBuffer& y)
{
  PW_TRY(require_shape(op, shape.rows > 0 && shape.out > 0 && shape.in > 0, "rows, out and in must be positive"));
  // int32 accumulation: 127 * 127 * K stays below 2^31 up to K = 133 143.
  PW_TRY(require_shape(op, shape.in <= 133143, "K above 133143 could overflow the int32 accumulator"));
  PW_TRY(require_bytes(op, "a", a, shape.rows * shape.in));
  PW_TRY(require_bytes(op, "a_scales", a_scales, shape.rows * sizeof(float)));
  PW_TRY(require_bytes(op, "w", w, shape.out * shape.in));
  PW_TRY(require_bytes(op, "w_scales", w_scales, shape.out * sizeof(float)));
  return require_bytes(op, "y", y, shape.rows * shape.out * format.element_bytes());
}

} // namespace

W8A8Gemm::W8A8Gemm(FloatFormat format, W8A8Config config) : m_format(format), m_config(config) {}

Defines
W8A8Gemm::defines() const
{
  return w8a8_defines(m_format, m_config);
}

LaunchGeometry
W8A8Gemm::geometry(const LinearShape& shape) const
{
  return LaunchGeometry::grid(round_up(shape.out, m_config.tile), round_up(shape.rows, m_config.tile), m_config.tile, m_config.tile);
}

Status
W8A8Gemm::run(Session& session, const LinearShape& shape, const DeviceBuffer& a, const DeviceBuffer& a_scales,
              const DeviceBuffer& w, const DeviceBuffer& w_scales, const DeviceBuffer& y) const
{
  PW_TRY(check_w8a8_arguments("w8a8_gemm", shape, m_format, a, a_scales, w, w_scales, y));
  PW_ASSIGN(Kernel kernel, session.kernel("w8a8.cl", "w8a8_gemm", defines()));
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(a).buffer(a_scales).buffer(w).buffer(w_scales).buffer(y)
                          .value(static_cast<cl_uint>(shape.rows)).value(static_cast<cl_uint>(shape.out))
                          .value(static_cast<cl_uint>(shape.in)));
}

W8A8Gemv::W8A8Gemv(FloatFormat format, W8A8Config config) : m_format(format), m_config(config) {}

Defines
W8A8Gemv::defines() const
{
  return w8a8_defines(m_format, m_config);
}

LaunchGeometry
W8A8Gemv::geometry(const LinearShape& shape) const
{
  return LaunchGeometry::grid(shape.out * m_config.local_size, shape.rows, m_config.local_size, 1);
}

Status
W8A8Gemv::run(Session& session, const LinearShape& shape, const DeviceBuffer& a, const DeviceBuffer& a_scales,
              const DeviceBuffer& w, const DeviceBuffer& w_scales, const DeviceBuffer& y) const
{
  PW_TRY(check_w8a8_arguments("w8a8_gemv", shape, m_format, a, a_scales, w, w_scales, y));
  PW_ASSIGN(Kernel kernel, session.kernel("w8a8.cl", "w8a8_gemv", defines()));
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(a).buffer(a_scales).buffer(w).buffer(w_scales).buffer(y)
                          .value(static_cast<cl_uint>(shape.out)).value(static_cast<cl_uint>(shape.in)));
}

} // namespace prewarm::engine::ops
