// SPDX-License-Identifier: Apache-2.0
// The decoder workload (issue "foundation"): one transformer layer as
// RMSNorm -> Q, K, V GEMMs (K and V into a KV cache) -> attention as
// softmax(Q K^T / sqrt(d)) V with a causal mask and grouped-query heads ->
// output GEMM + residual -> RMSNorm -> gate/up GEMMs -> SiLU(gate) * up ->
// down GEMM + residual, at fp32, for every batch size x prefill length of the
// request, followed by `decode_steps` single-token steps against the cache.
// Every output is checked against the CPU reference of the same layer.
//
// Coverage: representative runs one layer (all layers of a decoder have the
// same shape, so one layer launches every kernel variant the model does);
// full runs `layers` layers. Layers share one set of weights: the values do
// not change which kernels run. Not yet: RoPE, embedding and LM head.
#pragma once

#include "base/error.hpp"
#include "engine/architecture.hpp"
#include "engine/session.hpp"
#include "engine/workload.hpp"

#include <chrono>

namespace prewarm::engine {

Status run_decoder_workload(Session& session,
                            const DecoderArchitecture& architecture,
                            const WorkloadRequest& request,
                            std::chrono::steady_clock::time_point started,
                            WorkloadReport& report);

} // namespace prewarm::engine
