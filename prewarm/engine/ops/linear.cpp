// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/linear.hpp"

#include "engine/gemm.hpp"
#include "engine/ops/device_tensor.hpp"

#include <fmt/format.h>
#include <limits>

namespace prewarm::engine::ops {

Result<Linear>
Linear::load(Session& session, Precision precision, std::size_t out, std::size_t in, std::span<const float> w)
{
  if (out == 0 || in == 0 || w.size() != out * in) {
    return fail(Errc::internal, fmt::format("linear: {} weights for a {}x{} layer", w.size(), out, in),
                "E_OP_ARGUMENT");
  }
  Linear layer;
  layer.m_precision = precision;
  layer.m_format = FloatFormat::for_precision(precision, session);
  layer.m_out = out;
  layer.m_in = in;
  if (precision == Precision::int8) {
    layer.m_quantized = quantize_weights_per_channel(out, in, w);
    PW_ASSIGN(layer.m_weights, upload_raw(session, std::span<const std::int8_t>(layer.m_quantized.values)));
    PW_ASSIGN(layer.m_weight_scales, upload(session, layer.m_quantized.scales, Storage::fp32));
  } else {
    layer.m_host_weights = round_to_storage(w, layer.m_format.storage);
    PW_ASSIGN(layer.m_weights, upload(session, layer.m_host_weights, layer.m_format.storage));
  }
  return layer;
}

Status
Linear::ensure_scratch(Session& session, std::size_t rows)
{
  if (rows <= m_scratch_rows) {
    return {};
  }
  PW_ASSIGN(m_activations, session.allocate(rows * m_in));
  PW_ASSIGN(m_activation_scales, session.allocate(rows * sizeof(float)));
  m_scratch_rows = rows;
  return {};
}

Status
Linear::run(Session& session, Phase phase, std::size_t rows, const DeviceBuffer& x, const DeviceBuffer& y)
{
  const LinearShape shape{.rows = rows, .out = m_out, .in = m_in};
  if (m_precision == Precision::int8) {
    PW_TRY(ensure_scratch(session, rows));
    PW_TRY(QuantizePerToken(m_format).run(session, rows, m_in, x, m_activations, m_activation_scales));
    if (phase == Phase::prefill) {
      return W8A8Gemm(m_format).run(session, shape, m_activations, m_activation_scales, m_weights,
                                    m_weight_scales, y);
    }
    return W8A8Gemv(m_format).run(session, shape, m_activations, m_activation_scales, m_weights,
                                  m_weight_scales, y);
  }
  if (phase == Phase::decode) {
    return Gemv(m_format).run(session, shape, x, m_weights, y);
  }
  constexpr auto int_max = static_cast<std::size_t>(std::numeric_limits<int>::max());
  PW_TRY(require_shape("linear", rows * m_in <= int_max && m_out * m_in <= int_max && rows * m_out <= int_max,
                       "gemm.cl indexes with int"));
  const std::size_t e = m_format.element_bytes();
  PW_TRY(require_bytes("linear", "x", x, rows * m_in * e));
  PW_TRY(require_bytes("linear", "y", y, rows * m_out * e));
  GemmArgs args;
  args.m = static_cast<int>(rows);
  args.n = static_cast<int>(m_out);
  args.k = static_cast<int>(m_in);
  args.a = {.buffer = &x, .offset = 0, .ld = args.k, .batch_stride = 0};
  args.b = {.buffer = &m_weights, .offset = 0, .ld = args.k, .batch_stride = 0};
  args.b_layout = BLayout::transposed;
  args.c = {.buffer = &y, .offset = 0, .ld = args.n, .batch_stride = 0};
  Defines precision_defines;
  add_precision_defines(precision_defines, m_format);
  return run_gemm(session, args, precision_defines, linear_gemm_tile);
}

std::vector<float>
Linear::reference(std::size_t rows, std::span<const float> x) const
{
  const LinearShape shape{.rows = rows, .out = m_out, .in = m_in};
  if (m_precision == Precision::int8) {
    return w8a8_reference(shape, quantize_rows(rows, m_in, x), m_quantized);
  }
  return linear_reference(shape, x, m_host_weights);
}

Tolerance
Linear::tolerance() const
{
  return tolerance_for(m_format, m_precision == Precision::int8 ? Quantization::w8a8 : Quantization::none);
}

} // namespace prewarm::engine::ops
