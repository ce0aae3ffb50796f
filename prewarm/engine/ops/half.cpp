// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/half.hpp"

#include <bit>
#include <cstring>

namespace prewarm::engine::ops {

std::uint16_t
float_to_half(float value)
{
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t exponent = (bits >> 23) & 0xFFu;
  std::uint32_t mantissa = bits & 0x7FFFFFu;

  if (exponent == 0xFFu) { // inf or NaN (keep NaNs quiet and non-zero)
    return static_cast<std::uint16_t>(sign | 0x7C00u | (mantissa != 0 ? 0x200u | (mantissa >> 13) : 0u));
  }
  const int unbiased = static_cast<int>(exponent) - 127;
  if (unbiased > 15) {
    return static_cast<std::uint16_t>(sign | 0x7C00u); // overflow to inf
  }
  if (unbiased >= -14) { // normal half
    std::uint32_t half_bits = (static_cast<std::uint32_t>(unbiased + 15) << 10) | (mantissa >> 13);
    const std::uint32_t rest = mantissa & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half_bits & 1u) != 0)) {
      ++half_bits; // may carry into the exponent, up to inf: still correct
    }
    return static_cast<std::uint16_t>(sign | half_bits);
  }
  if (unbiased < -25) {
    return sign; // below half the smallest subnormal: rounds to zero
  }
  // Subnormal half: value = mantissa_with_implicit_one * 2^(unbiased - 23), in units of 2^-24.
  mantissa |= 0x800000u;
  const int shift = -unbiased - 1; // 14 .. 24 bits dropped
  std::uint32_t half_bits = mantissa >> shift;
  const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (half_bits & 1u) != 0)) {
    ++half_bits;
  }
  return static_cast<std::uint16_t>(sign | half_bits);
}

float
half_to_float(std::uint16_t bits)
{
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x3FFu;
  std::uint32_t out = 0;
  if (exponent == 0x1Fu) {
    out = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    out = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;
  } else { // subnormal: normalize
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    out = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mantissa & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(out);
}

} // namespace prewarm::engine::ops
