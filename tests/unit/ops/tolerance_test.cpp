// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/tolerance.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace prewarm::engine::ops {
namespace {

constexpr FloatFormat fp16_storage{Storage::fp16, Compute::fp32};
constexpr FloatFormat fp16_compute{Storage::fp16, Compute::fp16};

TEST(Tolerance, LoosensWithPrecision)
{
  const Tolerance fp32 = tolerance_for(FloatFormat::fp32());
  const Tolerance storage = tolerance_for(fp16_storage);
  const Tolerance compute = tolerance_for(fp16_compute);
  EXPECT_LT(fp32.abs, storage.abs);
  EXPECT_LT(storage.abs, compute.abs);
  EXPECT_LT(fp32.rel, storage.rel);
  EXPECT_LT(storage.rel, compute.rel);
  // Half output rounding (2^-11 relative) must pass at fp16 storage, fail at fp32.
  EXPECT_GT(storage.rel, std::ldexp(1.0, -11));
  EXPECT_LT(fp32.rel, std::ldexp(1.0, -11));
}

TEST(Tolerance, Bf16AllowsItsOwnRoundingAndLittleMore)
{
  // bf16 keeps 8 significant bits: one rounding is up to 2^-8 relative, eight
  // times fp16's 2^-11. It must pass at bf16 and fail at fp16 storage (the two
  // are told apart), and bf16 allows about two such roundings, not more.
  const Tolerance bf16 = tolerance_for(FloatFormat::bf16());
  const double rounding = std::ldexp(1.0, -8);
  EXPECT_GT(bf16.rel, rounding);
  EXPECT_GT(bf16.abs, rounding);
  EXPECT_LT(tolerance_for(fp16_storage).rel, rounding);
  EXPECT_LT(bf16.rel, 2.1 * rounding);
  EXPECT_LT(bf16.abs, 2.1 * rounding);
  // bf16 never computes in half: W8A8 and GPTQ keep bf16's own bound.
  EXPECT_EQ(tolerance_for(FloatFormat::bf16(), Quantization::gptq_int4).rel, bf16.rel);
}

TEST(Tolerance, QuantizedIsNeverTighterThanItsFloatFormat)
{
  for (FloatFormat f : {FloatFormat::fp32(), fp16_storage, fp16_compute, FloatFormat::bf16()}) {
    for (Quantization q : {Quantization::w8a8, Quantization::gptq_int4}) {
      EXPECT_GE(tolerance_for(f, q).abs, tolerance_for(f).abs);
      EXPECT_GE(tolerance_for(f, q).rel, tolerance_for(f).rel);
    }
  }
  EXPECT_GT(tolerance_for(FloatFormat::fp32(), Quantization::w8a8).abs, tolerance_for(FloatFormat::fp32()).abs);
}

TEST(Compare, AbsoluteTermScalesWithThePeak)
{
  const std::vector<float> want{100.0f, 0.0f};
  const std::vector<float> got{100.0f, 0.05f};
  // 0.05 <= 1e-3 * peak 100: passes although the element itself is 0.
  EXPECT_TRUE(compare(got, want, {1e-3, 0}).passed());
  EXPECT_FALSE(compare(got, want, {1e-4, 0}).passed());
}

TEST(Compare, FindsTheWorstElementAndCountsMismatches)
{
  const std::vector<float> want{1.0f, 2.0f, 3.0f, 4.0f};
  const std::vector<float> got{1.0f, 2.5f, 3.0f, 5.0f};
  const Comparison c = compare(got, want, {1e-3, 1e-3});
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.worst_index, 3u);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(c.peak, 4.0);
}

TEST(Compare, NanOnOneSideIsAMismatch)
{
  const std::vector<float> want{1.0f, 2.0f};
  const std::vector<float> got{1.0f, NAN};
  EXPECT_FALSE(compare(got, want, {1, 1}).passed());
  EXPECT_FALSE(compare(want, got, {1, 1}).passed());
}

TEST(CheckClose, NamesTheMismatchAndTheShapeError)
{
  const std::vector<float> want{1.0f, 2.0f};
  const std::vector<float> got{1.0f, 3.0f};
  const Status mismatch = check_close("gelu fp32", got, want, {1e-4, 1e-4});
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().code(), "E_OP_MISMATCH");
  EXPECT_NE(mismatch.error().message().find("gelu fp32"), std::string::npos);
  EXPECT_NE(mismatch.error().message().find("element 1"), std::string::npos);

  const std::vector<float> shorter{1.0f};
  const Status shape = check_close("gelu fp32", shorter, want, {1, 1});
  ASSERT_FALSE(shape);
  EXPECT_EQ(shape.error().code(), "E_OP_SHAPE");
  EXPECT_TRUE(check_close("same", want, want, {0, 0}));
}

} // namespace
} // namespace prewarm::engine::ops
