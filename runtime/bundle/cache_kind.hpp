// SPDX-License-Identifier: Apache-2.0
// The kinds of kernel cache a bundle carries. Each kind is one top-level
// directory of a slice ("pocl/...", "neo/...") and one set of environment
// variables that points an application at an installed copy of it.
// Why each variable: see shared/research/kernel-caches.md.
#pragma once

#include "base/error.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::bundle {

enum class CacheKind {
  programs, // prewarm's own OpenCL program store (PREWARM_PROGRAM_STORE)
  pocl,     // PoCL kernel cache (POCL_CACHE_DIR)
  cuda,     // NVIDIA ComputeCache (CUDA_CACHE_PATH)
  neo,      // Intel compute-runtime cl_cache / l0 cache (NEO_CACHE_DIR)
  sycl,     // DPC++ persistent cache (SYCL_CACHE_DIR)
  triton,   // Triton (TRITON_CACHE_DIR)
  inductor, // PyTorch Inductor / FX graph cache (TORCHINDUCTOR_CACHE_DIR)
};

// The directory name of a kind, also its name in manifests and CLIs.
std::string_view to_string(CacheKind kind);

// "pocl" -> CacheKind::pocl. Unknown names are Errc::usage naming the value
// and listing the known ones.
Result<CacheKind> parse_cache_kind(std::string_view name);

// Every kind, in declaration order.
std::span<const CacheKind> all_cache_kinds();

struct EnvSetting
{
  std::string name;
  std::string value;
  auto operator<=>(const EnvSetting&) const = default;
};

// The variables that make an application read and write the cache of `kind`
// in `dir` (an installed directory, or a staging directory the builder fills).
// Caches that evict by size get a cap that never evicts what was installed on
// the first run: `size_hint` is the installed size in bytes (0 if unknown);
// kinds whose limit is a fixed "unlimited" value ignore it.
std::vector<EnvSetting> cache_environment(CacheKind kind,
                                          const std::filesystem::path& dir,
                                          std::uint64_t size_hint);

} // namespace prewarm::bundle
