// SPDX-License-Identifier: Apache-2.0
// One checked forward pass through a stack of GPTQ 4-bit linear layers
// (engine::GptqStackArchitecture) with seeded random weights: load (act-order
// shuffle), then reorder + matmul per layer for `rows` tokens. GPTQ models run
// with half activations: pass FloatFormat::fp16_for(session) for the real thing,
// fp32 to separate quantization from half rounding.
#pragma once

#include "base/error.hpp"
#include "engine/models/forward_check.hpp"
#include "engine/ops/model_names.hpp"
#include "engine/ops/precision.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <cstdint>

namespace prewarm::engine::models {

Result<ForwardSummary> run_gptq_stack_forward(Session& session, const GptqStackArchitecture& architecture,
                                              ops::FloatFormat format, std::size_t rows, std::uint32_t seed);

} // namespace prewarm::engine::models
