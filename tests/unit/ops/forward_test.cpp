// SPDX-License-Identifier: Apache-2.0
// Model-level forward passes built from the ops, each op checked on the way.
#include "engine/models/cnn_forward.hpp"
#include "engine/models/decoder_forward.hpp"
#include "engine/models/gptq_stack_forward.hpp"
#include "op_fixture.hpp"

#include <tuple>

namespace prewarm::engine::ops::testing {
namespace {

// The forward passes (engine/models) checked with the ops' fixture.
using models::DecoderForwardOptions;
using models::ForwardSummary;
using models::run_cnn_forward;
using models::run_decoder_forward;
using models::run_gptq_stack_forward;

class CnnForwardTest
  : public OpTest
  , public ::testing::WithParamInterface<Precision>
{};

CnnArchitecture
small_lprnet_like()
{
  CnnArchitecture cnn;
  cnn.input_width = 30; // pools to 15: odd sizes downstream
  cnn.input_height = 10;
  cnn.input_channels = 3;
  cnn.layers = {{.out_channels = 8, .kernel = 3, .stride = 1, .padding = 1, .pool = 2},
                {.out_channels = 12, .kernel = 3, .stride = 2, .padding = 1, .pool = 0},
                {.out_channels = 16, .kernel = 1, .stride = 1, .padding = 0, .pool = 0}};
  cnn.classes = 7;
  return cnn;
}

TEST_P(CnnForwardTest, EveryLayerMatchesItsReference)
{
  const ForwardSummary summary =
    must(run_cnn_forward(session(), small_lprnet_like(), GetParam(), 2, static_cast<std::uint32_t>(rng()())));
  // 4 convolutions + 1 max-pool.
  EXPECT_EQ(summary.checks, 5u);
  EXPECT_GT(summary.elements, 0u);
  std::cout << "[ check  ] cnn " << to_string(GetParam()) << ": max abs " << summary.max_abs_error << ", max rel "
            << summary.max_rel_error << "\n";
}

TEST_P(CnnForwardTest, ALayerWithNoOutputIsAUsageError)
{
  CnnArchitecture cnn = small_lprnet_like();
  cnn.layers.push_back({.out_channels = 4, .kernel = 9, .stride = 1, .padding = 0, .pool = 0});
  const auto result = run_cnn_forward(session(), cnn, GetParam(), 1, 1);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().category(), Errc::usage);
}

INSTANTIATE_TEST_SUITE_P(Ops, CnnForwardTest, every_precision(), precision_name);

using DecoderCase = std::tuple<Precision, DecoderArchitecture::Norm>;

class DecoderForwardTest
  : public OpTest
  , public ::testing::WithParamInterface<DecoderCase>
{};

TEST_P(DecoderForwardTest, PrefillAndDecodeStepsMatchOpByOp)
{
  const auto [precision, norm] = GetParam();
  DecoderArchitecture arch;
  arch.hidden = 64;
  arch.heads = 4;
  arch.kv_heads = 2; // grouped-query
  arch.head_dim = 16;
  arch.ffn = 96;
  arch.vocab = 300;
  arch.rope_theta = 1000000.0;
  arch.norm = norm;
  // Llama/Qwen: RMSNorm + SwiGLU; the LayerNorm case also takes the GELU MLP (GPT style).
  arch.activation = norm == DecoderArchitecture::Norm::rmsnorm ? DecoderArchitecture::Activation::silu
                                                               : DecoderArchitecture::Activation::gelu;
  DecoderForwardOptions options;
  options.batch = 2;
  options.prefill = 5;
  options.decode_steps = 2;
  options.layers = 2;
  options.max_vocab = 200;
  options.seed = static_cast<std::uint32_t>(rng()());
  const ForwardSummary summary = must(run_decoder_forward(session(), arch, precision, options));
  // Per layer per pass: norm, q, k, v, 2 rope, 2 cache writes, attention, o, residual, norm,
  // up, (gate,) activation, down, residual; per pass: embedding, final norm, LM head.
  const std::size_t per_layer = norm == DecoderArchitecture::Norm::rmsnorm ? 17 : 16;
  EXPECT_EQ(summary.checks, (1 + options.decode_steps) * (options.layers * per_layer + 3));
  std::cout << "[ check  ] decoder " << to_string(precision) << ": " << summary.checks << " op outputs, max abs "
            << summary.max_abs_error << ", max rel " << summary.max_rel_error << "\n";
}

INSTANTIATE_TEST_SUITE_P(Ops, DecoderForwardTest,
                         ::testing::Combine(every_precision(),
                                            ::testing::Values(DecoderArchitecture::Norm::rmsnorm,
                                                              DecoderArchitecture::Norm::layernorm)),
                         [](const auto& info) {
                           return std::string(to_string(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) == DecoderArchitecture::Norm::rmsnorm ? "_rmsnorm_swiglu"
                                                                                                 : "_layernorm_gelu");
                         });

// Qwen2.5-0.5B's layer shapes (vocabulary capped at 8192 for the host reference).
// Minutes on a 2-core CPU device: run with --gtest_also_run_disabled_tests.
class DecoderRealShapes
  : public OpTest
  , public ::testing::WithParamInterface<Precision>
{};

TEST_P(DecoderRealShapes, DISABLED_Qwen25HalfBillionOneLayer)
{
  DecoderArchitecture arch;
  arch.hidden = 896;
  arch.heads = 14;
  arch.kv_heads = 2;
  arch.head_dim = 64;
  arch.ffn = 4864;
  arch.vocab = 151936;
  arch.rope_theta = 1000000.0;
  DecoderForwardOptions options;
  options.batch = 1;
  options.prefill = 16;
  options.decode_steps = 2;
  options.max_vocab = 8192;
  options.seed = static_cast<std::uint32_t>(rng()());
  const ForwardSummary summary = must(run_decoder_forward(session(), arch, GetParam(), options));
  std::cout << "[ check  ] qwen2.5-0.5b layer " << to_string(GetParam()) << ": " << summary.checks
            << " op outputs, " << summary.elements << " elements, max abs " << summary.max_abs_error << ", max rel "
            << summary.max_rel_error << "\n";
}

INSTANTIATE_TEST_SUITE_P(Ops, DecoderRealShapes, every_precision(), precision_name);

class GptqStackForwardTest : public OpFormatTest
{};

TEST_P(GptqStackForwardTest, ActOrderStackMatchesLayerByLayer)
{
  GptqStackArchitecture stack;
  stack.layers = {{.in_features = 128, .out_features = 96}, {.in_features = 96, .out_features = 64}};
  stack.group_size = 32;
  stack.act_order = true;
  const ForwardSummary summary =
    must(run_gptq_stack_forward(session(), stack, format(), 3, static_cast<std::uint32_t>(rng()())));
  EXPECT_EQ(summary.checks, 2u);
}

TEST_P(GptqStackForwardTest, MismatchedLayerSizesAreAUsageError)
{
  GptqStackArchitecture stack;
  stack.layers = {{.in_features = 64, .out_features = 32}, {.in_features = 64, .out_features = 32}};
  stack.group_size = 32;
  const auto result = run_gptq_stack_forward(session(), stack, format(), 1, 1);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().category(), Errc::usage);
  EXPECT_NE(result.error().message().find("layer 1"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Ops, GptqStackForwardTest, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
