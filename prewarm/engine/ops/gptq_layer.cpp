// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/gptq_layer.hpp"

#include "engine/ops/device_tensor.hpp"

namespace prewarm::engine::ops {

Result<GptqLayer>
GptqLayer::load(Session& session, FloatFormat format, GptqWeights weights)
{
  GptqLayer layer;
  layer.m_format = format;
  weights.scales = round_to_storage(weights.scales, format.storage);
  PW_ASSIGN(ActOrderWeights shuffled, shuffle_for_act_order(weights));
  bool sequential = true;
  for (std::size_t k = 0; k < shuffled.perm.size(); ++k) {
    sequential = sequential && static_cast<std::size_t>(shuffled.perm[k]) == k;
  }
  layer.m_act_order = sequential ? ActOrder::sequential : ActOrder::reorder;
  PW_ASSIGN(layer.m_qweight, upload_raw(session, std::span<const std::uint32_t>(shuffled.qweight)));
  PW_ASSIGN(layer.m_perm, upload_raw(session, std::span<const std::int32_t>(shuffled.perm)));
  PW_ASSIGN(layer.m_scales, upload(session, weights.scales, format.storage));
  PW_ASSIGN(layer.m_qzeros, upload_raw(session, std::span<const std::uint32_t>(weights.qzeros)));
  layer.m_weights = std::move(weights);
  return layer;
}

Status
GptqLayer::run(Session& session, std::size_t rows, const DeviceBuffer& x, const DeviceBuffer& y)
{
  const LinearShape shape{.rows = rows, .out = m_weights.out, .in = m_weights.in};
  const GptqMatmul matmul(m_format);
  if (m_act_order == ActOrder::sequential) {
    return matmul.run(session, shape, m_weights.group_size, x, m_qweight, m_scales, m_qzeros, y);
  }
  if (rows > m_x_perm_rows) {
    PW_ASSIGN(m_x_perm, session.allocate(rows * m_weights.in * m_format.element_bytes()));
    m_x_perm_rows = rows;
  }
  PW_TRY(GptqReorder(m_format).run(session, rows, m_weights.in, x, m_perm, m_x_perm));
  return matmul.run(session, shape, m_weights.group_size, m_x_perm, m_qweight, m_scales, m_qzeros, y);
}

std::vector<float>
GptqLayer::reference(std::size_t rows, std::span<const float> x) const
{
  return gptq_reference(rows, x, m_weights);
}

} // namespace prewarm::engine::ops
