// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/bfloat16.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if __has_include(<stdfloat>)
#include <stdfloat>
#endif

namespace prewarm::engine::ops {
namespace {

TEST(Bfloat16, KnownValuesRoundToNearestEven)
{
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);                     // tie: even mantissa stays
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(3.0f, -8)), 0x3F82);                     // tie: odd mantissa rounds up
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3F81); // above the tie: up
  EXPECT_EQ(float_to_bf16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 0.0f)), 0x3F80);   // below the tie: down
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);              // rounds up to inf
  EXPECT_EQ(float_to_bf16(std::ldexp(1.0f, -133)), 0x0001);                          // smallest subnormal
  EXPECT_EQ(float_to_bf16(std::ldexp(1.0f, -134)), 0x0000);                          // tie between 0 and it: even
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(INFINITY), 0x7F80);
  EXPECT_EQ(float_to_bf16(-INFINITY), 0xFF80);
  // A NaN whose payload lies only in the dropped bits must not become infinity.
  const std::uint16_t nan = float_to_bf16(std::bit_cast<float>(0x7F800001u));
  EXPECT_EQ(nan & 0x7F80, 0x7F80);
  EXPECT_NE(nan & 0x007F, 0);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
}

TEST(Bfloat16, WideningIsTheUpperHalfOfAFloat)
{
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(bf16_to_float(0x8000)), 0x80000000u);
}

TEST(Bfloat16, EveryBf16SurvivesARoundTrip)
{
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    const float f = bf16_to_float(b);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(f))));
      continue;
    }
    ASSERT_EQ(float_to_bf16(f), b) << "bf16 0x" << std::hex << bits;
  }
}

TEST(Bfloat16, RoundingErrorIsAtMostHalfAnUlpOnSampledFloats)
{
  // Independent of the bit trick: the chosen neighbour is the nearer of the
  // two bf16 values around f, and the even one on a tie.
  std::size_t checked = 0;
  for (std::uint64_t b = 0; b < 0x100000000ull; b += 65521) { // prime stride: all exponents, varied mantissas
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(b));
    if (!std::isfinite(f) || std::abs(f) >= std::ldexp(255.0f, 120)) {
      continue; // NaN, inf, and the top binade where the upper neighbour is inf
    }
    const auto down = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16); // toward zero
    const auto up = static_cast<std::uint16_t>(down + 1);                                  // away from zero
    const double d_down = std::abs(static_cast<double>(f) - bf16_to_float(down));
    const double d_up = std::abs(static_cast<double>(f) - bf16_to_float(up));
    const std::uint16_t expected = d_down < d_up ? down : d_up < d_down ? up : ((down & 1u) == 0 ? down : up);
    ASSERT_EQ(float_to_bf16(f), expected) << "float bits 0x" << std::hex << b;
    ++checked;
  }
  EXPECT_GT(checked, 60000u);
}

#if defined(__STDCPP_BFLOAT16_T__)
// The compiler's own std::bfloat16_t (C++23, GCC 13+) is another oracle.
TEST(Bfloat16, MatchesTheCompilersBfloat16OnSampledFloats)
{
  for (std::uint64_t b = 0; b < 0x100000000ull; b += 65521) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(b));
    if (std::isnan(f)) {
      continue;
    }
    const auto converted = static_cast<std::bfloat16_t>(f);
    std::uint16_t expected = 0;
    std::memcpy(&expected, &converted, sizeof expected);
    ASSERT_EQ(float_to_bf16(f), expected) << "float bits 0x" << std::hex << b;
  }
}
#endif

} // namespace
} // namespace prewarm::engine::ops
