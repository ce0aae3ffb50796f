// SPDX-License-Identifier: Apache-2.0
// One checked forward pass of a small CNN (engine::CnnArchitecture, LPRNet
// style) with seeded random weights: per layer conv2d + folded batch-norm +
// ReLU (+ max-pool), then a 1x1 conv to `classes` channels with bias.
//   fp32 / fp16   Conv2d in that FloatFormat
//   int8          per-image QuantizePerToken + Conv2dW8A8 (float bias, fp16 between layers)
// Every op's output is checked against its CPU reference (ForwardChecker).
#pragma once

#include "base/error.hpp"
#include "engine/models/forward_check.hpp"
#include "engine/ops/model_names.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <cstdint>

namespace prewarm::engine::models {

Result<ForwardSummary> run_cnn_forward(Session& session, const CnnArchitecture& architecture,
                                       Precision precision, std::size_t batch, std::uint32_t seed);

} // namespace prewarm::engine::models
