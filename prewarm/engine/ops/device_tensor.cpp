// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/device_tensor.hpp"

#include "engine/ops/bfloat16.hpp"
#include "engine/ops/half.hpp"
#include "engine/session.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::engine::ops {

namespace {

// The 16-bit patterns of `values` in a 2-byte storage format, and back.
std::vector<std::uint16_t>
narrow(std::span<const float> values, Storage storage)
{
  std::vector<std::uint16_t> out(values.size());
  std::ranges::transform(values, out.begin(), storage == Storage::bf16 ? float_to_bf16 : float_to_half);
  return out;
}

std::vector<float>
widen(std::span<const std::uint16_t> bits, Storage storage)
{
  std::vector<float> out(bits.size());
  std::ranges::transform(bits, out.begin(), storage == Storage::bf16 ? bf16_to_float : half_to_float);
  return out;
}

} // namespace

Result<DeviceBuffer>
upload(Session& session, std::span<const float> values, Storage storage)
{
  if (storage == Storage::fp32) {
    return upload_raw(session, values);
  }
  const std::vector<std::uint16_t> narrowed = narrow(values, storage);
  return upload_raw(session, std::span<const std::uint16_t>(narrowed));
}

Result<std::vector<float>>
download(Session& session, const DeviceBuffer& buffer, std::size_t count, Storage storage)
{
  if (storage == Storage::fp32) {
    std::vector<float> out(count);
    PW_TRY(session.read(buffer, std::span<float>(out)));
    return out;
  }
  std::vector<std::uint16_t> narrowed(count);
  PW_TRY(session.read(buffer, std::span<std::uint16_t>(narrowed)));
  return widen(narrowed, storage);
}

std::vector<float>
round_to_storage(std::span<const float> values, Storage storage)
{
  if (storage == Storage::fp32) {
    return {values.begin(), values.end()};
  }
  const std::vector<std::uint16_t> narrowed = narrow(values, storage);
  return widen(narrowed, storage);
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
