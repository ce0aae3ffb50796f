// SPDX-License-Identifier: Apache-2.0
#include "engine/models/forward_programs.hpp"

#include "engine/ops/attention.hpp"
#include "engine/ops/conv2d.hpp"
#include "engine/ops/embedding.hpp"
#include "engine/ops/gemv.hpp"
#include "engine/ops/gptq.hpp"
#include "engine/ops/layer_norm.hpp"
#include "engine/ops/rope.hpp"
#include "engine/ops/w8a8.hpp"

#include <set>

namespace prewarm::engine::models {

// The ops this forward pass is built of.
using namespace ops;

namespace {

Defines
precision_only(FloatFormat format)
{
  Defines defines;
  add_precision_defines(defines, format);
  return defines;
}

class ProgramSet
{
public:
  void add(std::string_view source, const Defines& defines) { m_set.insert({std::string(source), defines.options()}); }
  std::vector<ProgramVariant> list() const { return {m_set.begin(), m_set.end()}; }

private:
  std::set<ProgramVariant> m_set;
};

void
add_linear_programs(ProgramSet& set, Precision precision, FloatFormat format, bool decode)
{
  if (precision == Precision::int8) {
    set.add("w8a8.cl", w8a8_defines(format, {})); // quantize, gemm and gemv: one program
    return;
  }
  Defines gemm = precision_only(format);
  gemm.set("TILE", linear_gemm_tile).set("TRANSPOSE_B", 1);
  set.add("gemm.cl", gemm);
  if (decode) {
    set.add("gemv.cl", Gemv(format).defines());
  }
}

} // namespace

std::vector<ProgramVariant>
decoder_forward_programs(const DecoderArchitecture& architecture, Precision precision, Compute half_compute,
                         const DecoderForwardOptions& options)
{
  const FloatFormat format = FloatFormat::for_precision(precision, half_compute);
  ProgramSet set;
  set.add("embedding.cl",
          EmbeddingGather(format, precision == Precision::int8 ? TableFormat::int8 : TableFormat::float_rows).defines());
  if (architecture.norm == DecoderArchitecture::Norm::layernorm) {
    set.add("layernorm.cl", LayerNorm(format).defines());
  } else {
    Defines rmsnorm = precision_only(format);
    rmsnorm.set("WG", rmsnorm_work_group);
    set.add("rmsnorm.cl", rmsnorm);
  }
  add_linear_programs(set, precision, format, options.decode_steps > 0);
  set.add("rope.cl", Rope(format).defines());
  set.add("attention.cl", attention_defines(format, {.head_dim = static_cast<std::size_t>(architecture.head_dim)}));
  set.add("elementwise.cl", precision_only(format)); // residual add, silu_mul or gelu
  return set.list();
}

std::vector<ProgramVariant>
cnn_forward_programs(const CnnArchitecture& architecture, Precision precision, Compute half_compute)
{
  const FloatFormat format = FloatFormat::for_precision(precision, half_compute);
  ProgramSet set;
  for (const ConvLayer& layer : architecture.layers) {
    set.add("conv.cl", Conv2d(format, static_cast<std::size_t>(layer.kernel), Activation::relu).defines());
    if (layer.pool > 0) {
      set.add("conv.cl", MaxPool2d(format).defines());
    }
  }
  set.add("conv.cl", Conv2d(format, 1, Activation::none).defines()); // the classifier
  if (precision == Precision::int8) {
    set.add("w8a8.cl", w8a8_defines(format, {}));
  }
  return set.list();
}

std::vector<ProgramVariant>
gptq_stack_forward_programs(FloatFormat format)
{
  ProgramSet set;
  set.add("gptq.cl", GptqMatmul(format).defines()); // the reorder shares the program
  return set.list();
}

std::vector<ProgramVariant>
programs_of(std::span<const std::string> variants)
{
  std::set<ProgramVariant> set;
  for (const std::string& v : variants) {
    const auto colon = v.find(':');
    const auto open = v.find(" [");
    const auto close = v.find("] ", open == std::string::npos ? 0 : open);
    if (colon == std::string::npos || open == std::string::npos || close == std::string::npos) {
      continue; // a foreign kernel: no program of ours
    }
    set.insert({v.substr(0, colon), v.substr(open + 2, close - open - 2)});
  }
  return {set.begin(), set.end()};
}

} // namespace prewarm::engine::models
