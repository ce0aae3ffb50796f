// SPDX-License-Identifier: Apache-2.0
// The program lists that AOT compiles must be exactly what a run builds: each
// forward pass runs on a fresh Session and its recorded variants are compared
// with the list made without running.
#include "engine/models/cnn_forward.hpp"
#include "engine/models/decoder_forward.hpp"
#include "engine/models/forward_programs.hpp"
#include "engine/models/gptq_stack_forward.hpp"
#include "op_fixture.hpp"

#include <sstream>

namespace prewarm::engine::ops::testing {
namespace {

// The forward passes (engine/models) checked with the ops' fixture.
using models::DecoderForwardOptions;
using models::ProgramVariant;
using models::cnn_forward_programs;
using models::decoder_forward_programs;
using models::gptq_stack_forward_programs;
using models::programs_of;
using models::run_cnn_forward;
using models::run_decoder_forward;
using models::run_gptq_stack_forward;

std::string
describe(const std::vector<ProgramVariant>& programs)
{
  std::ostringstream out;
  for (const auto& p : programs) {
    out << "  " << p.source_name << " [" << p.options << "]\n";
  }
  return out.str();
}

class ForwardPrograms
  : public OpTest
  , public ::testing::WithParamInterface<Precision>
{
protected:
  Session fresh_session() { return must(Session::open({})); }
  Compute half_compute(const Session& s) { return s.has_fp16() ? Compute::fp16 : Compute::fp32; }
};

TEST_P(ForwardPrograms, DecoderListMatchesTheRun)
{
  for (const auto norm : {DecoderArchitecture::Norm::rmsnorm, DecoderArchitecture::Norm::layernorm}) {
    DecoderArchitecture arch;
    arch.hidden = 32;
    arch.heads = 2;
    arch.kv_heads = 1;
    arch.head_dim = 16;
    arch.ffn = 48;
    arch.vocab = 50;
    arch.norm = norm;
    DecoderForwardOptions options;
    options.prefill = 3;
    options.decode_steps = 1;
    options.seed = 7;
    Session s = fresh_session();
    must(run_decoder_forward(s, arch, GetParam(), options));
    const auto ran = programs_of(s.stats().variants);
    const auto listed = decoder_forward_programs(arch, GetParam(), half_compute(s), options);
    EXPECT_EQ(ran, listed) << "ran:\n" << describe(ran) << "listed:\n" << describe(listed);
    // One build per kernel file: the ops of a file share their specialisation.
    std::set<std::string> files;
    for (const auto& p : listed) {
      EXPECT_TRUE(files.insert(p.source_name).second) << p.source_name << " is built twice";
    }
  }
}

TEST_P(ForwardPrograms, CnnListMatchesTheRun)
{
  CnnArchitecture cnn;
  cnn.input_width = 16;
  cnn.input_height = 8;
  cnn.layers = {{.out_channels = 4, .kernel = 3, .stride = 1, .padding = 1, .pool = 2},
                {.out_channels = 6, .kernel = 5, .stride = 1, .padding = 2, .pool = 0}};
  cnn.classes = 3;
  Session s = fresh_session();
  must(run_cnn_forward(s, cnn, GetParam(), 1, 3));
  const auto ran = programs_of(s.stats().variants);
  const auto listed = cnn_forward_programs(cnn, GetParam(), half_compute(s));
  EXPECT_EQ(ran, listed) << "ran:\n" << describe(ran) << "listed:\n" << describe(listed);
}

INSTANTIATE_TEST_SUITE_P(Ops, ForwardPrograms, every_precision(), precision_name);

// GPTQ runs with fp32, fp16 or bf16 activations; there is no int8 case.
class GptqForwardPrograms : public OpFormatTest
{};

TEST_P(GptqForwardPrograms, GptqListMatchesTheRun)
{
  GptqStackArchitecture stack;
  stack.layers = {{.in_features = 64, .out_features = 32}};
  stack.group_size = 32;
  Session s = must(Session::open({}));
  const FloatFormat format = format_on(GetParam(), s);
  must(run_gptq_stack_forward(s, stack, format, 2, 5));
  EXPECT_EQ(programs_of(s.stats().variants), gptq_stack_forward_programs(format));
}

INSTANTIATE_TEST_SUITE_P(Ops, GptqForwardPrograms, every_format(), format_name);

TEST(ProgramsOf, ParsesSessionVariantNames)
{
  const std::vector<std::string> variants{
    "attention.cl:attention_prefill [-DBLOCK_KV=16 -DHEAD_DIM=64] local=16x1x1",
    "attention.cl:attention_decode [-DBLOCK_KV=16 -DHEAD_DIM=64] local=32x1",
    "elementwise.cl:gelu [] local=128", "(foreign kernel) local=auto"};
  const std::vector<ProgramVariant> want{{"attention.cl", "-DBLOCK_KV=16 -DHEAD_DIM=64"}, {"elementwise.cl", ""}};
  EXPECT_EQ(programs_of(variants), want);
}

} // namespace
} // namespace prewarm::engine::ops::testing
