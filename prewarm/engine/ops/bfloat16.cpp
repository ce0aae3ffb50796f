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

} // namespace prewarm::engine::ops
