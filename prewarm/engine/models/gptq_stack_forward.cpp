// SPDX-License-Identifier: Apache-2.0
#include "engine/models/gptq_stack_forward.hpp"

#include "engine/ops/device_tensor.hpp"
#include "engine/ops/gptq_layer.hpp"

#include <fmt/format.h>
#include <random>

namespace prewarm::engine::models {

// The ops this forward pass is built of.
using namespace ops;

Result<ForwardSummary>
run_gptq_stack_forward(Session& session, const GptqStackArchitecture& architecture, FloatFormat format,
                       std::size_t rows, std::uint32_t seed)
{
  if (architecture.layers.empty() || rows == 0 || architecture.group_size <= 0) {
    return fail(Errc::usage, "gptq stack: needs at least one layer, a positive group size and rows");
  }
  std::mt19937 rng(seed);
  ForwardChecker checker;
  const auto first_in = static_cast<std::size_t>(architecture.layers.front().in_features);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(rows * first_in);
  for (float& v : x) {
    v = dist(rng);
  }
  x = round_to_storage(x, format.storage);
  PW_ASSIGN(DeviceBuffer device_x, upload(session, x, format.storage));
  std::size_t in = first_in;
  const GroupOrder order = architecture.act_order ? GroupOrder::act_order : GroupOrder::sequential;
  for (std::size_t i = 0; i < architecture.layers.size(); ++i) {
    const engine::GptqLinear& spec = architecture.layers[i];
    const auto layer_in = static_cast<std::size_t>(spec.in_features);
    const auto out = static_cast<std::size_t>(spec.out_features);
    if (layer_in != in) {
      return fail(Errc::usage, fmt::format("gptq stack layer {}: in_features {} but the previous layer gives {}", i,
                                           layer_in, in));
    }
    PW_ASSIGN(GptqWeights weights, random_gptq_weights(static_cast<std::uint32_t>(rng()), in, out,
                                                       static_cast<std::size_t>(architecture.group_size), order));
    PW_ASSIGN(GptqLayer layer, GptqLayer::load(session, format, std::move(weights)));
    PW_ASSIGN(DeviceBuffer device_y, session.allocate(rows * out * format.element_bytes()));
    PW_TRY(layer.run(session, rows, device_x, device_y));
    const std::vector<float> want = layer.reference(rows, x);
    PW_ASSIGN(x, download(session, device_y, rows * out, format.storage));
    PW_TRY(checker.check(fmt::format("gptq layer {} ({}x{}, group {})", i, in, out, architecture.group_size), x,
                         want, layer.tolerance()));
    device_x = std::move(device_y);
    in = out;
  }
  return checker.summary();
}

} // namespace prewarm::engine::models
