// SPDX-License-Identifier: Apache-2.0
// The host-side parts of the ops that need no device: batch-norm folding, GPTQ
// packing and the act-order shuffle, per-row int8 quantization.
#include "engine/ops/conv2d.hpp"
#include "engine/ops/gptq.hpp"
#include "engine/ops/tolerance.hpp"
#include "engine/ops/uniform_values.hpp"
#include "engine/ops/w8a8.hpp"
#include "random_gptq.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

namespace prewarm::engine::ops {
namespace {

std::mt19937
seeded_rng()
{
  const std::uint32_t seed = std::random_device{}();
  std::cout << "[ seed   ] " << seed << "\n";
  return std::mt19937(seed);
}

TEST(FoldBatchNorm, FoldedConvolutionEqualsConvolutionThenBatchNorm)
{
  auto rng = seeded_rng();
  const Conv2dShape shape{.batch = 2, .in_channels = 3, .in_height = 7, .in_width = 9, .out_channels = 4,
                          .kernel = 3, .stride = 2, .padding = 1};
  const auto input = uniform_values(rng, shape.input_size(), -1, 1);
  const auto weights = uniform_values(rng, shape.weight_size(), -0.5f, 0.5f);
  const auto bias = uniform_values(rng, shape.out_channels, -0.1f, 0.1f);
  const auto gamma = uniform_values(rng, shape.out_channels, 0.5f, 1.5f);
  const auto beta = uniform_values(rng, shape.out_channels, -0.2f, 0.2f);
  const auto mean = uniform_values(rng, shape.out_channels, -0.3f, 0.3f);
  const auto variance = uniform_values(rng, shape.out_channels, 0.1f, 2.0f);
  const BatchNorm norm{gamma, beta, mean, variance, 1e-5};

  const FoldedConv folded = fold_batch_norm(shape, weights, bias, norm);
  for (Activation activation : {Activation::none, Activation::relu}) {
    const auto got = Conv2d::reference(shape, input, folded.weights, folded.bias, activation);
    const auto want = Conv2d::reference_unfolded(shape, input, weights, bias, norm, activation);
    EXPECT_TRUE(check_close("fold_batch_norm", got, want, {1e-5, 1e-5}));
  }
  // And the check can fail: a wrong epsilon changes the result.
  const FoldedConv wrong = fold_batch_norm(shape, weights, bias, BatchNorm{gamma, beta, mean, variance, 0.5});
  EXPECT_FALSE(check_close("wrong eps", Conv2d::reference(shape, input, wrong.weights, wrong.bias, Activation::none),
                           Conv2d::reference_unfolded(shape, input, weights, bias, norm, Activation::none),
                           {1e-5, 1e-5}));
}

TEST(Gptq, PackedNibblesReadBackAsPacked)
{
  const std::size_t in = 16;
  const std::size_t out = 8;
  const std::size_t group_size = 8;
  std::vector<std::uint8_t> q(in * out);
  std::vector<std::uint8_t> zeros(2 * out);
  for (std::size_t i = 0; i < q.size(); ++i) {
    q[i] = static_cast<std::uint8_t>((i * 7 + 3) % 16);
  }
  for (std::size_t i = 0; i < zeros.size(); ++i) {
    zeros[i] = static_cast<std::uint8_t>((i * 5 + 1) % 16);
  }
  std::vector<float> scales(2 * out, 0.01f);
  std::vector<std::int32_t> g_idx(in);
  for (std::size_t k = 0; k < in; ++k) {
    g_idx[k] = static_cast<std::int32_t>(k / group_size);
  }
  const GptqWeights w = pack_gptq(in, out, group_size, q, zeros, scales, g_idx).value();
  ASSERT_EQ(w.qweight.size(), in / 8 * out);
  ASSERT_EQ(w.qzeros.size(), 2 * out / 8);
  for (std::size_t k = 0; k < in; ++k) {
    for (std::size_t n = 0; n < out; ++n) {
      ASSERT_EQ(w.weight(k, n), q[k * out + n]);
    }
  }
  for (std::size_t g = 0; g < 2; ++g) {
    for (std::size_t n = 0; n < out; ++n) {
      ASSERT_EQ(w.zero(g, n), zeros[g * out + n]);
    }
  }
  // Row 8r + j is nibble j of word row r (GPTQ's layout), not nibble 7 - j.
  EXPECT_EQ(w.qweight[0] & 0xFu, q[0]);
  EXPECT_EQ((w.qweight[0] >> 28) & 0xFu, q[7 * out]);
}

TEST(Gptq, ShuffledRowsHoldContiguousGroupsAndPermuteBack)
{
  auto rng = seeded_rng();
  const GptqWeights w = testing::random_gptq(rng, 64, 16, 16, GroupOrder::act_order);
  const ActOrderWeights shuffled = shuffle_for_act_order(w).value();
  ASSERT_EQ(shuffled.perm.size(), w.in);
  for (std::size_t k = 0; k < w.in; ++k) {
    const auto source = static_cast<std::size_t>(shuffled.perm[k]);
    EXPECT_EQ(static_cast<std::size_t>(w.g_idx[source]), k / w.group_size);
    for (std::size_t n = 0; n < w.out; ++n) {
      const unsigned got = (shuffled.qweight[(k / 8) * w.out + n] >> (4 * (k % 8))) & 0xFu;
      ASSERT_EQ(got, w.weight(source, n));
    }
  }
}

TEST(Gptq, RejectsGroupIndicesThatAreNotGroupSized)
{
  auto rng = seeded_rng();
  GptqWeights w = testing::random_gptq(rng, 32, 8, 16, GroupOrder::act_order);
  auto moved = std::find(w.g_idx.begin(), w.g_idx.end(), 0);
  *moved = 1; // group 0 now has 15 channels, group 1 has 17
  auto result = shuffle_for_act_order(w);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), "E_GPTQ_G_IDX");
  w.g_idx[3] = 7; // only 2 groups
  result = shuffle_for_act_order(w);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), "E_GPTQ_G_IDX");
}

TEST(Gptq, PackingRejectsSizesThatAreNotMultiplesOfEight)
{
  const std::vector<std::uint8_t> q(12 * 8);
  const std::vector<std::uint8_t> zeros(8);
  const std::vector<float> scales(8);
  const std::vector<std::int32_t> g_idx(12);
  const auto result = pack_gptq(12, 8, 16, q, zeros, scales, g_idx);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), "E_OP_ARGUMENT");
}

TEST(QuantizeRows, PeakMapsToFullScaleAndZeroRowsStayZero)
{
  auto rng = seeded_rng();
  auto x = uniform_values(rng, 3 * 40, -4, 4);
  std::fill(x.begin() + 40, x.begin() + 80, 0.0f); // row 1 all zero
  const QuantizedRows q = quantize_rows(3, 40, x);
  for (std::size_t r : {0u, 2u}) {
    float peak = 0;
    int full_scale = 0;
    for (std::size_t c = 0; c < 40; ++c) {
      peak = std::max(peak, std::fabs(x[r * 40 + c]));
      full_scale += std::abs(q.values[r * 40 + c]) == 127 ? 1 : 0;
      // Dequantized within half a step.
      EXPECT_LE(std::fabs(q.values[r * 40 + c] * q.scales[r] - x[r * 40 + c]), q.scales[r] * 0.5f + 1e-6f);
    }
    EXPECT_FLOAT_EQ(q.scales[r], peak / 127.0f);
    EXPECT_GE(full_scale, 1);
  }
  EXPECT_EQ(q.scales[1], 1.0f);
  for (std::size_t c = 0; c < 40; ++c) {
    EXPECT_EQ(q.values[40 + c], 0);
  }
}

} // namespace
} // namespace prewarm::engine::ops
