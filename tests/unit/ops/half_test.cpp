// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace prewarm::engine::ops {
namespace {

TEST(Half, KnownValuesRoundToNearestEven)
{
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);                    // largest half
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);                    // halfway to 2^16: rounds to inf
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);       // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);       // tie between 0 and 2^-24: even (0)
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);       // tie between 1 and 2 ulps: even (2)
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00); // tie: even mantissa stays
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(3.0f, -11)), 0x3C02); // tie: odd mantissa rounds up
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(INFINITY), 0x7C00);
  const std::uint16_t nan = float_to_half(NAN);
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
}

TEST(Half, EveryHalfSurvivesARoundTrip)
{
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = half_to_float(h);
    if (std::isnan(f)) {
      EXPECT_EQ(h & 0x7C00, 0x7C00);
      continue;
    }
    ASSERT_EQ(float_to_half(f), h) << "half 0x" << std::hex << bits;
  }
}

#if defined(__FLT16_MAX__)
// The compiler's own _Float16 conversion is an independent oracle.
TEST(Half, MatchesTheCompilersFloat16OnSampledFloats)
{
  std::size_t checked = 0;
  for (std::uint64_t b = 0; b < 0x100000000ull; b += 65521) { // prime stride: all exponents, varied mantissas
    const auto bits = static_cast<std::uint32_t>(b);
    const float f = std::bit_cast<float>(bits);
    if (std::isnan(f)) {
      continue;
    }
    const auto h = static_cast<_Float16>(f);
    std::uint16_t expected = 0;
    std::memcpy(&expected, &h, sizeof expected);
    ASSERT_EQ(float_to_half(f), expected) << "float bits 0x" << std::hex << bits;
    ++checked;
  }
  EXPECT_GT(checked, 60000u);
}
#endif

} // namespace
} // namespace prewarm::engine::ops
