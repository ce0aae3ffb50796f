// SPDX-License-Identifier: Apache-2.0
// The programs (kernels/<file> + build options) a forward pass builds, listed
// without running it: what ahead-of-time compilation must produce for a device
// that is not present, and what a warm cache must hold. The lists are checked
// against what Session records during a real run (tests/unit/ops).
#pragma once

#include "engine/models/decoder_forward.hpp"
#include "engine/ops/linear.hpp"
#include "engine/ops/model_names.hpp"
#include "engine/ops/precision.hpp"

#include <compare>
#include <span>
#include <string>
#include <vector>

namespace prewarm::engine::models {

struct ProgramVariant
{
  std::string source_name; // "attention.cl"
  std::string options;     // engine::Defines::options(): "-DBLOCK_KV=16 -DBLOCK_Q=16 ..."
  auto operator<=>(const ProgramVariant&) const = default;
};

// The engine's row kernels at the size the forward passes use them (the
// linears' GEMM tile: linear_gemm_tile, engine/ops/linear.hpp).
inline constexpr int rmsnorm_work_group = 64;

// half_compute: Compute::fp16 for a target with cl_khr_fp16 (Intel GPUs),
// Compute::fp32 without (NVIDIA, PoCL); fp16 and int8 only (bf16 computes in
// float everywhere). Sorted, without duplicates.
std::vector<ProgramVariant> decoder_forward_programs(const DecoderArchitecture& architecture, Precision precision,
                                                     ops::Compute half_compute, const DecoderForwardOptions& options);
std::vector<ProgramVariant> cnn_forward_programs(const CnnArchitecture& architecture, Precision precision,
                                                 ops::Compute half_compute);
std::vector<ProgramVariant> gptq_stack_forward_programs(ops::FloatFormat format);

// The programs behind Session::stats().variants ("file:kernel [options] local=L"),
// sorted, without duplicates.
std::vector<ProgramVariant> programs_of(std::span<const std::string> variants);

} // namespace prewarm::engine::models
