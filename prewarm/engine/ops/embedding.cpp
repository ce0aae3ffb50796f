// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/embedding.hpp"

#include "engine/ops/device_tensor.hpp"

#include <fmt/format.h>

namespace prewarm::engine::ops {

EmbeddingGather::EmbeddingGather(FloatFormat format, TableFormat table_format)
  : m_format(format), m_table_format(table_format)
{
}

Defines
EmbeddingGather::defines() const
{
  Defines defines;
  add_precision_defines(defines, m_format);
  if (m_table_format == TableFormat::int8) {
    defines.flag("EMBEDDING_INT8");
  }
  return defines;
}

LaunchGeometry
EmbeddingGather::geometry(const Shape& shape) const
{
  return LaunchGeometry::grid({shape.hidden, shape.tokens, 1}, {0, 0, 0});
}

Status
EmbeddingGather::run(Session& session, const Shape& shape, std::span<const std::int32_t> ids,
                     const DeviceBuffer& ids_buffer, const DeviceBuffer& table,
                     const DeviceBuffer* row_scales, const DeviceBuffer& out) const
{
  constexpr std::string_view op = "embedding_gather";
  PW_TRY(require_shape(op, shape.tokens > 0 && shape.hidden > 0 && shape.vocab > 0,
                       "tokens, hidden and vocab must be positive"));
  PW_TRY(require_shape(op, ids.size() == shape.tokens, "one id per token"));
  for (std::size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] < 0 || static_cast<std::size_t>(ids[t]) >= shape.vocab) {
      return fail(Errc::failed,
                  fmt::format("{}: token {} has id {}, outside the vocabulary [0, {})", op, t, ids[t],
                              shape.vocab),
                  "E_OP_ARGUMENT");
    }
  }
  const bool int8 = m_table_format == TableFormat::int8;
  PW_TRY(require_bytes(op, "ids", ids_buffer, shape.tokens * sizeof(cl_int)));
  PW_TRY(require_bytes(op, "table", table,
                       shape.vocab * shape.hidden * (int8 ? 1 : m_format.element_bytes())));
  PW_TRY(require_bytes(op, "out", out, shape.tokens * shape.hidden * m_format.element_bytes()));
  KernelArgs args;
  args.buffer(ids_buffer).buffer(table);
  if (int8) {
    PW_TRY(require_shape(op, row_scales != nullptr, "an int8 table needs row scales"));
    PW_TRY(require_bytes(op, "row_scales", *row_scales, shape.vocab * sizeof(float)));
    args.buffer(*row_scales);
  }
  args.buffer(out).value(static_cast<cl_uint>(shape.hidden)).value(static_cast<cl_uint>(shape.vocab));
  PW_ASSIGN(Kernel kernel, session.kernel("embedding.cl", "embedding_gather", defines()));
  return session.launch(kernel, geometry(shape), args);
}

std::vector<float>
EmbeddingGather::reference(const Shape& shape, std::span<const std::int32_t> ids,
                           std::span<const float> table, std::span<const float> row_scales)
{
  std::vector<float> out(shape.tokens * shape.hidden, 0.0f);
  for (std::size_t t = 0; t < shape.tokens; ++t) {
    const auto id = static_cast<std::size_t>(ids[t]);
    for (std::size_t c = 0; c < shape.hidden; ++c) {
      const float v = table[id * shape.hidden + c];
      out[t * shape.hidden + c] = row_scales.empty() ? v : v * row_scales[id];
    }
  }
  return out;
}

} // namespace prewarm::engine::ops
