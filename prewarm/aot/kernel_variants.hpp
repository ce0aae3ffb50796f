// SPDX-License-Identifier: Apache-2.0
// The kernel programs a built-in workload compiles: (kernels/<file>, build
// options) pairs. AOT compiles exactly these, so that a binary exists for
// every program the run path builds.
//
// The engine has no function yet that lists its variants without running a
// workload, so this is a table that mirrors the engine's run path as of this
// commit (prewarm/engine/decoder_workload.cpp, gemm.cpp, row_kernels.cpp):
//   gemm.cl        TILE=16, TRANSPOSE_B=0 and 1       (k_gemm_tile, BLayout)
//   softmax.cl     WG=64                              (k_row_work_group)
//   rmsnorm.cl     WG=64
//   elementwise.cl no defines                          (silu_mul)
// fp16 adds PRECISION_FP16 and COMPUTE_HALF (Intel GPUs report cl_khr_fp16,
// engine/ops/precision.cpp). Options are rendered as engine::Defines renders
// them (sorted by name, "-DNAME=VALUE" / "-DNAME", single spaces);
// tests/unit/aot checks that against engine::Defines. When the engine grows
// an enumeration function, builtin_variants() should call it instead.
#pragma once

#include "base/error.hpp"
#include "engine/architecture.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::aot {

struct KernelVariant
{
  std::string source_name; // "gemm.cl"
  std::string options;     // "-DTILE=16 -DTRANSPOSE_B=0"
  auto operator<=>(const KernelVariant&) const = default;
};

// Defines -> option string, the engine's canonical spelling.
std::string render_options(const std::map<std::string, std::string>& defines); // "" value = flag

// The programs of the built-in decoder workload at `precision`, sorted and
// distinct. int8 is Errc::usage: the engine does not run it yet either.
Result<std::vector<KernelVariant>> builtin_variants(engine::Precision precision);

} // namespace prewarm::aot
