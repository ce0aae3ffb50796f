// SPDX-License-Identifier: Apache-2.0
// One checked forward pass of a decoder-only transformer (engine::DecoderArchitecture,
// Qwen/Llama style) with seeded random weights, built from the ops:
//   prefill  embedding -> per layer [norm -> q/k/v linears -> RoPE(q, k) -> KV cache
//            write -> causal GQA attention -> o linear + residual -> norm -> MLP
//            (SwiGLU: silu(gate) * up; GELU: gelu(up)) -> down linear + residual]
//            -> final norm -> LM head
//   decode   `decode_steps` greedy steps (argmax of the device's logits), one token per
//            sequence: the same with GEMV linears and decode attention over the cache.
// Precision: fp32 / fp16 run every op in that FloatFormat; int8 runs the linears
// as W8A8 (and the embedding table in int8), everything else in fp16 storage.
// RMSNorm is the engine's kernels/rmsnorm.cl; LayerNorm is ops::LayerNorm.
// Every op output is checked against its CPU reference (ForwardChecker).
// Layers share one set of weights (values do not change which kernels run).
#pragma once

#include "base/error.hpp"
#include "engine/models/forward_check.hpp"
#include "engine/ops/model_names.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <cstdint>

namespace prewarm::engine::models {

struct DecoderForwardOptions
{
  std::size_t batch = 1;
  std::size_t prefill = 16;      // tokens per sequence in the prefill
  std::size_t decode_steps = 2;
  std::size_t layers = 1;        // layers to run (1 = representative)
  std::size_t max_vocab = 0;     // cap the vocabulary (0 = the architecture's): the
                                 // kernel variants do not depend on it, the host reference
                                 // time and memory do
  std::uint32_t seed = 1;
};

Result<ForwardSummary> run_decoder_forward(Session& session, const DecoderArchitecture& architecture,
                                           Precision precision, const DecoderForwardOptions& options);

} // namespace prewarm::engine::models
