// SPDX-License-Identifier: Apache-2.0
// Embedding gather (kernels/embedding.cl): out[t] = table[ids[t]]. The table is
// float (in the op's storage format) or, with TableFormat::int8, int8 with one
// float scale per row (-DEMBEDDING_INT8). Ids outside [0, vocab) are rejected
// on the host (run() takes them as host values, since they are tiny and the
// host has them anyway), before they can reach the device.
// Global (hidden, tokens), local chosen by the driver.
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "engine/ops/precision.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace prewarm::engine::ops {

enum class TableFormat { float_rows, int8 };

class EmbeddingGather
{
public:
  struct Shape
  {
    std::size_t tokens = 0;
    std::size_t hidden = 0;
    std::size_t vocab = 0;
  };

  EmbeddingGather(FloatFormat format, TableFormat table_format);
  Defines defines() const;
  LaunchGeometry geometry(const Shape& shape) const;
  // ids_buffer holds `ids` (int32) on the device; row_scales only for int8 tables.
  Status run(Session& session, const Shape& shape, std::span<const std::int32_t> ids,
             const DeviceBuffer& ids_buffer, const DeviceBuffer& table, const DeviceBuffer* row_scales,
             const DeviceBuffer& out) const;
  // table: float rows, or the int8 values widened to float with row_scales.
  static std::vector<float> reference(const Shape& shape, std::span<const std::int32_t> ids,
                                      std::span<const float> table, std::span<const float> row_scales = {});

private:
  FloatFormat m_format;
  TableFormat m_table_format;
};

} // namespace prewarm::engine::ops
