// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/bfloat16.hpp"

#include <bit>

namespace prewarm::engine::ops {

std::uint16_t
float_to_bf16(float value)
{
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<std::uint16_t>((bits >> 16) | 0x40u); // NaN: set the quiet bit, keep it non-zero
  }
  // Adding 0x7FFF rounds a remainder above one half up; the low bit of the
  // kept part adds the last one for a tie on an odd value. A carry out of the
  // significand moves to the next binade, or to infinity: both correct.
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

float
bf16_to_float(std::uint16_t bits)
{
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::vector<std::uint16_t>
to_bf16(std::span<const float> values)
{
  std::vector<std::uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    out[i] = float_to_bf16(values[i]);
  }
  return out;
}

std::vector<float>
from_bf16(std::span<const std::uint16_t> bits)
{
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) {
    out[i] = bf16_to_float(bits[i]);
  }
  return out;
}

} // namespace prewarm::engine::ops
