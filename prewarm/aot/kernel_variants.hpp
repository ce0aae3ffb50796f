// SPDX-License-Identifier: Apache-2.0
// The kernel programs a built-in workload compiles: (kernels/<file>, build
// options) pairs. AOT compiles exactly these, so that a binary exists for
// every program the run path builds. They come from the engine itself
// (engine/models/forward_programs.hpp lists a forward pass's programs without
// running it, and tests/unit/ops checks the lists against real runs), for the
// manifest's architecture, precision and shapes, with half-precision compute
// for fp16: every Intel GPU target reports cl_khr_fp16 (bf16 computes in float
// on every device, so its variants are those of any run).
#pragma once

#include "base/error.hpp"
#include "model/architecture.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::aot {

struct KernelVariant
{
  std::string source_name; // "gemm.cl"
  std::string options;     // "-DTILE=16 -DTRANSPOSE_B=1"
  auto operator<=>(const KernelVariant&) const = default;
};

// Defines -> option string, the engine's canonical spelling (engine::Defines):
// sorted by name, "-DNAME=VALUE" or "-DNAME" for an empty value.
std::string render_options(const std::map<std::string, std::string>& defines);

// The programs the built-in workload of `model` builds at `precision` for
// every shape of `shapes` (the run path loops over batch sizes and prefill
// lengths the same way); sorted, distinct.
Result<std::vector<KernelVariant>> workload_variants(const model::ModelArchitecture& model,
                                                     model::Precision precision,
                                                     const model::Shapes& shapes,
                                                     model::Coverage coverage);

} // namespace prewarm::aot
