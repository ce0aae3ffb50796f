// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/device_tensor.hpp"

#include "engine/ops/half.hpp"
#include "engine/session.hpp"

#include <fmt/format.h>

namespace prewarm::engine::ops {

Result<DeviceBuffer>
upload(Session& session, std::span<const float> values, Storage storage)
{
  if (storage == Storage::fp32) {
    return upload_raw(session, values);
  }
  const std::vector<std::uint16_t> halves = to_half(values);
  return upload_raw(session, std::span<const std::uint16_t>(halves));
}

Result<std::vector<float>>
download(Session& session, const DeviceBuffer& buffer, std::size_t count, Storage storage)
{
  if (storage == Storage::fp32) {
    std::vector<float> out(count);
    PW_TRY(session.read(buffer, std::span<float>(out)));
    return out;
  }
  std::vector<std::uint16_t> halves(count);
  PW_TRY(session.read(buffer, std::span<std::uint16_t>(halves)));
  return from_half(halves);
}

std::vector<float>
round_to_storage(std::span<const float> values, Storage storage)
{
  if (storage == Storage::fp32) {
    return {values.begin(), values.end()};
  }
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    out[i] = half_to_float(float_to_half(values[i]));
  }
  return out;
}

Status
require_bytes(std::string_view op, std::string_view argument, const DeviceBuffer& buffer,
              std::size_t bytes)
{
  if (!buffer || buffer.bytes() < bytes) {
    return fail(Errc::internal,
                fmt::format("{}: argument {} holds {} bytes, the shape needs {}", op, argument,
                            buffer ? buffer.bytes() : 0, bytes),
                "E_OP_ARGUMENT");
  }
  return {};
}

Status
require_shape(std::string_view op, bool condition, std::string_view what)
{
  if (!condition) {
    return fail(Errc::internal, fmt::format("{}: unsupported shape: {}", op, what), "E_OP_ARGUMENT");
  }
  return {};
}

} // namespace prewarm::engine::ops
