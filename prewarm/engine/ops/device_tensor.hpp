// SPDX-License-Identifier: Apache-2.0
// Moving float tensors between the host (always float) and device buffers in
// an op's storage format (fp32 as is, fp16 and bf16 rounded to nearest even), plus the
// size checks every op runs on its arguments before a launch.
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/ops/precision.hpp"
#include "engine/session.hpp"

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace prewarm::engine::ops {

Result<DeviceBuffer> upload(Session& session, std::span<const float> values, Storage storage);
Result<std::vector<float>> download(Session& session, const DeviceBuffer& buffer, std::size_t count,
                                    Storage storage);

// Raw element types (int8 weights, int ids, packed uint32 words) go as they are.
template<typename T>
Result<DeviceBuffer> upload_raw(Session& session, std::span<const T> values);

// What the device sees after storing `values` in `storage` (the reference's input).
std::vector<float> round_to_storage(std::span<const float> values, Storage storage);

// E_OP_ARGUMENT unless `buffer` holds at least `bytes`; names the op and the argument.
Status require_bytes(std::string_view op, std::string_view argument, const DeviceBuffer& buffer,
                     std::size_t bytes);

// E_OP_ARGUMENT unless `condition`; `what` says which shape rule failed.
Status require_shape(std::string_view op, bool condition, std::string_view what);

template<typename T>
Result<DeviceBuffer>
upload_raw(Session& session, std::span<const T> values)
{
  PW_ASSIGN(DeviceBuffer buffer, session.allocate(std::max<std::size_t>(values.size_bytes(), 1)));
  if (!values.empty()) {
    PW_TRY(session.write(buffer, values));
  }
  return buffer;
}

} // namespace prewarm::engine::ops
