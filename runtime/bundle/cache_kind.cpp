// SPDX-License-Identifier: Apache-2.0
#include "bundle/cache_kind.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

#include <array>

namespace prewarm::bundle {

namespace {

constexpr std::array k_kinds = {CacheKind::programs, CacheKind::pocl,   CacheKind::cuda,
                                CacheKind::neo,      CacheKind::sycl,   CacheKind::triton,
                                CacheKind::inductor};

// CUDA_CACHE_MAXSIZE is capped by the driver at 4 GiB; asking for the cap
// means the first run never evicts installed entries (the default 1 GiB /
// 256 MiB would).
constexpr std::uint64_t k_cuda_cache_max = 4294967296;

} // namespace

std::string_view
to_string(CacheKind kind)
{
  switch (kind) {
    case CacheKind::programs: return "programs";
    case CacheKind::pocl: return "pocl";
    case CacheKind::cuda: return "cuda";
    case CacheKind::neo: return "neo";
    case CacheKind::sycl: return "sycl";
    case CacheKind::triton: return "triton";
    case CacheKind::inductor: return "inductor";
  }
  return "unknown";
}

Result<CacheKind>
parse_cache_kind(std::string_view name)
{
  for (const auto kind : k_kinds) {
    if (to_string(kind) == name) {
      return kind;
    }
  }
  std::string known;
  for (const auto kind : k_kinds) {
    known += known.empty() ? "" : ", ";
    known += to_string(kind);
  }
  return fail(Errc::usage, fmt::format("unknown cache kind {} (known: {})", in_quotes(name), known));
}

std::span<const CacheKind>
all_cache_kinds()
{
  return k_kinds;
}

std::vector<EnvSetting>
cache_environment(CacheKind kind, const std::filesystem::path& dir, std::uint64_t /*size_hint*/)
{
  const std::string path = dir.string();
  switch (kind) {
    case CacheKind::programs:
      return {{"PREWARM_PROGRAM_STORE", path}};
    case CacheKind::pocl:
      return {{"POCL_CACHE_DIR", path}};
    case CacheKind::cuda:
      // CUDA_CACHE_DISABLE=0 explicitly: some images set it to 1.
      return {{"CUDA_CACHE_PATH", path},
              {"CUDA_CACHE_DISABLE", "0"},
              {"CUDA_CACHE_MAXSIZE", std::to_string(k_cuda_cache_max)}};
    case CacheKind::neo:
      // NEO silently disables a cache whose directory does not exist or when
      // NEO_CACHE_PERSISTENT=0; 0 as max size means no eviction.
      return {{"NEO_CACHE_DIR", path}, {"NEO_CACHE_PERSISTENT", "1"}, {"NEO_CACHE_MAX_SIZE", "0"}};
    case CacheKind::sycl:
      // The persistent cache is off unless asked for (intel/llvm PR #3891);
      // SYCL_CACHE_MAX_SIZE defaults to 0 = no eviction, so it is left alone.
      return {{"SYCL_CACHE_DIR", path}, {"SYCL_CACHE_PERSISTENT", "1"}};
    case CacheKind::triton:
      return {{"TRITON_CACHE_DIR", path}};
    case CacheKind::inductor:
      // Inductor defaults to a directory under /tmp and the FX graph and
      // AOTAutograd caches are what make a warm start skip compilation.
      return {{"TORCHINDUCTOR_CACHE_DIR", path},
              {"TORCHINDUCTOR_FX_GRAPH_CACHE", "1"},
              {"TORCHINDUCTOR_AUTOGRAD_CACHE", "1"}};
  }
  return {};
}

} // namespace prewarm::bundle
