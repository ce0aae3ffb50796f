// SPDX-License-Identifier: Apache-2.0
#include "bundle/cache_kind.hpp"

#include "base/encoding.hpp"
#include "bundle/installed_environment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace prewarm::bundle {

namespace {

// CUDA_CACHE_MAXSIZE is capped by the driver at 4 GiB; asking for the cap
// means the first run never evicts installed entries (the default 1 GiB /
// 256 MiB would).
constexpr std::uint64_t k_cuda_cache_max = 4294967296;

// NEO's temporaries come from mkstemp("cl_cache.XXXXXX") and friends.
bool
is_neo_temporary(std::string_view name)
{
  for (const std::string_view stem : {"cl_cache.", "l0_cache.", "ocloc_cache."}) {
    if (name.starts_with(stem) && name.size() == stem.size() + 6) {
      const auto suffix = name.substr(stem.size());
      return std::all_of(suffix.begin(), suffix.end(),
                         [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
    }
  }
  return false;
}

// A stale .lock hides its entry forever; cache_size.txt is recomputed.
bool
is_sycl_bookkeeping(std::string_view name)
{
  return name.ends_with(".lock") || name == "cache_size.txt";
}

// The audit's view: files a run writes on a hit as on a miss.
std::string_view
file_name(std::string_view relative_path)
{
  const auto slash = relative_path.rfind('/');
  return slash == std::string_view::npos ? relative_path : relative_path.substr(slash + 1);
}

// Triton stages an entry in a tmp.* directory (also under inductor/triton).
bool
under_triton_staging(std::string_view relative_path)
{
  while (!relative_path.empty()) {
    if (relative_path.starts_with("tmp.")) {
      return true;
    }
    const auto slash = relative_path.find('/');
    if (slash == std::string_view::npos) {
      break;
    }
    relative_path.remove_prefix(slash + 1);
  }
  return false;
}

// tempfile_* are per-process temporaries PoCL creates even on a hit;
// last_accessed is touched on every use.
bool
is_pocl_rewritten(std::string_view relative_path)
{
  const auto name = file_name(relative_path);
  return name.starts_with("tempfile_") || name.starts_with("_UNCACHED_") || name == "last_accessed";
}

// NEO writes these beside its entries on a hit as on a miss: config.file
// (the running total size, rewritten on every store and recomputed when
// missing), stats (NEO_CACHE_STATS=1 counters, added to by every process),
// <hash>.trace / <hash>.input (BinaryCacheTrace=1: the key inputs, written on
// every lookup), and the mkstemp temporaries an entry is staged in
// (cl_cache.XXXXXX and friends) — none of them is a compiled program.
bool
is_neo_rewritten(std::string_view relative_path)
{
  const auto name = file_name(relative_path);
  if (name == "config.file" || name == "stats" || name.ends_with(".trace") || name.ends_with(".input")) {
    return true;
  }
  for (const std::string_view stem : {"cl_cache.", "l0_cache.", "ocloc_cache."}) {
    if (name.starts_with(stem) && name.size() == stem.size() + 6) {
      return true;
    }
  }
  return false;
}

bool
is_torch_rewritten(std::string_view relative_path)
{
  return under_triton_staging(relative_path) || file_name(relative_path).ends_with(".lock");
}

// Why each variable and each bookkeeping name: kernel-caches.md §2 (NEO),
// §4 (SYCL), §5 (CUDA), §6 (PoCL), §7 (Triton), §8 (Inductor), §17 (install
// hygiene).
constexpr std::array<CacheKindRules, cache_kind_count> k_rules = {{
  {CacheKind::programs, "programs",
   [](const std::string& dir) -> std::vector<EnvSetting> { return {{"PREWARM_PROGRAM_STORE", dir}}; }, "",
   nullptr, nullptr, EntryLayout::program_store, nullptr, false, {}, true},
  {CacheKind::pocl, "pocl", [](const std::string& dir) -> std::vector<EnvSetting> { return {{"POCL_CACHE_DIR", dir}}; },
   ".cache/pocl/kcache",
   [](std::string_view name) { return name.starts_with("tempfile_") || name.starts_with("_UNCACHED_"); }, nullptr,
   EntryLayout::pocl_program, is_pocl_rewritten, false},
  // CUDA_CACHE_DISABLE=0 explicitly: some images set it to 1. The layout is
  // undocumented: ship it whole.
  {CacheKind::cuda, "cuda",
   [](const std::string& dir) -> std::vector<EnvSetting> {
     return {{"CUDA_CACHE_PATH", dir},
             {"CUDA_CACHE_DISABLE", "0"},
             {"CUDA_CACHE_MAXSIZE", std::to_string(k_cuda_cache_max)}};
   },
   ".nv/ComputeCache", nullptr, nullptr, EntryLayout::file,
   [](std::string_view relative_path) { return relative_path == "index"; }, false},
  // NEO silently disables a cache whose directory does not exist or when
  // NEO_CACHE_PERSISTENT=0; 0 as max size means no eviction. config.file
  // holds the running total size: a shipped one is wrong on the target and
  // NEO recomputes it when it is missing.
  {CacheKind::neo, "neo",
   [](const std::string& dir) -> std::vector<EnvSetting> {
     return {{"NEO_CACHE_DIR", dir}, {"NEO_CACHE_PERSISTENT", "1"}, {"NEO_CACHE_MAX_SIZE", "0"}};
   },
   ".cache/neo_compiler_cache",
   [](std::string_view name) {
     return name == "config.file" || name == "stats" || is_neo_temporary(name) || name.ends_with(".trace") ||
            name.ends_with(".input");
   },
   nullptr, EntryLayout::neo_file, is_neo_rewritten, false},
  // The persistent cache is off unless asked for (intel/llvm PR #3891);
  // SYCL_CACHE_MAX_SIZE defaults to 0 = no eviction, so it is left alone.
  {CacheKind::sycl, "sycl",
   [](const std::string& dir) -> std::vector<EnvSetting> {
     return {{"SYCL_CACHE_DIR", dir}, {"SYCL_CACHE_PERSISTENT", "1"}};
   },
   ".cache/libsycl_cache", is_sycl_bookkeeping,
   [](std::string_view name) { return name == "cache_size.txt" || (name.size() > 5 && name.ends_with(".lock")); },
   EntryLayout::top_directory,
   [](std::string_view relative_path) { return file_name(relative_path).ends_with(".lock"); }, false},
  {CacheKind::triton, "triton",
   [](const std::string& dir) -> std::vector<EnvSetting> { return {{"TRITON_CACHE_DIR", dir}}; }, ".triton/cache",
   [](std::string_view name) { return name.starts_with("tmp."); }, nullptr, EntryLayout::triton,
   under_triton_staging, true},
  // Inductor defaults to a directory under /tmp (/tmp/torchinductor_$USER:
  // outside HOME, so always set explicitly) and the FX graph and AOTAutograd
  // caches are what make a warm start skip compilation. Bookkeeping: FileLock
  // files; Triton's tmp.* staging under inductor/triton.
  // The static CUDA launcher is off for the reason the dynamo row gives.
  {CacheKind::inductor, "inductor",
   [](const std::string& dir) -> std::vector<EnvSetting> {
     return {{"TORCHINDUCTOR_CACHE_DIR", dir},
             {"TORCHINDUCTOR_FX_GRAPH_CACHE", "1"},
             {"TORCHINDUCTOR_AUTOGRAD_CACHE", "1"},
             {"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "0"}};
   },
   "", [](std::string_view name) { return name.ends_with(".lock") || name.starts_with("tmp."); }, nullptr,
   EntryLayout::inductor_tree, is_torch_rewritten, true},
  // Dynamo's work: with TORCH_CACHING_PRECOMPILE=1 PyTorch (2.8 and later)
  // loads a frame's traced bytecode, guards and compiled graphs from
  // $TORCHINDUCTOR_CACHE_DIR/dynamo/<sha256(qualname, first line)>/entry at
  // torch.compile(), so a fresh process does not trace the model again. Those
  // entries live inside the Inductor cache directory (no variable of their
  // own) and their compiled graphs refer to Inductor's files, so this kind is
  // a whole Inductor cache with precompile on: a manifest names it instead of
  // inductor. PyTorch checks the Python and torch versions (and GPU, toolkit
  // and Triton) recorded in each entry and, on any mismatch, changed source
  // or failing guards, compiles as usual. It writes entries only when
  // torch.compiler.save_cache_artifacts() runs: the capture adds that call at
  // exit (cache_capture.cpp), the application is not changed.
  // Static CUDA launcher off, at the capture and wherever the kind is
  // installed: with it on (the default on CUDA since torch 2.7), the entries
  // keep each Triton kernel pickled with the absolute path of its source at
  // the capture, and Inductor's autotune cache reads and writes
  // <that path>.best_config: installed at any other path, every process
  // autotunes again and writes into the build machine's path. Off, the
  // kernels load from the installed Triton cache by their key, and the
  // autotune results are found beside the installed sources (H100, torch
  // 2.11: the proof on a copy at another path went from "wrote 3 files at
  // the capture's path" to 0 new in every kind; bench/results/gpu-h100-any-path).
  {CacheKind::dynamo, "dynamo",
   [](const std::string& dir) -> std::vector<EnvSetting> {
     return {{"TORCHINDUCTOR_CACHE_DIR", dir},
             {"TORCHINDUCTOR_FX_GRAPH_CACHE", "1"},
             {"TORCHINDUCTOR_AUTOGRAD_CACHE", "1"},
             {"TORCH_CACHING_PRECOMPILE", "1"},
             {"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "0"}};
   },
   "", [](std::string_view name) { return name.ends_with(".lock") || name.starts_with("tmp."); }, nullptr,
   EntryLayout::inductor_tree, is_torch_rewritten, false, "aotautograd/"},
  // Python's compiled modules. Images often set PYTHONDONTWRITEBYTECODE=1 and
  // ship no __pycache__, so every process compiles the source of all it
  // imports (PyTorch's compiler stack: seconds per process). With
  // PYTHONPYCACHEPREFIX Python reads and writes every .pyc under one tree
  // that mirrors the sources' absolute paths, so the application is not
  // changed and nothing is written beside the sources. This variable is safe
  // to export: it only locates a cache. Python checks each .pyc against its
  // source (modification time and size, or the hash for hash-based .pyc) and
  // compiles the source again when it differs, so a changed module never runs
  // old bytecode; the slice requires the Python version because the .pyc
  // names (cpython-3XY) and magic number are per version. Installed
  // read-only, Python cannot add to it and silently does not. The capture
  // removes PYTHONDONTWRITEBYTECODE for the program (cache_capture.cpp).
  {CacheKind::pycache, "pycache",
   [](const std::string& dir) -> std::vector<EnvSetting> { return {{"PYTHONPYCACHEPREFIX", dir}}; }, "",
   // Python writes <name>.pyc.<id> and renames it: a leftover is a crash's.
   [](std::string_view name) { return name.find(".pyc.") != std::string_view::npos; }, nullptr,
   EntryLayout::file, nullptr, false},
}};

// Row i is kind i: a kind without a row, or rows out of order, fails the build.
constexpr bool
every_kind_has_its_row()
{
  for (std::size_t i = 0; i < k_rules.size(); ++i) {
    if (static_cast<std::size_t>(k_rules[i].kind) != i || k_rules[i].environment == nullptr) {
      return false;
    }
  }
  return true;
}
static_assert(every_kind_has_its_row(), "k_rules needs one row per CacheKind, in declaration order");

constexpr bool
one_kind_is_served_by_the_layer()
{
  return std::ranges::count_if(k_rules, [](const CacheKindRules& r) { return r.served_by_opencl_layer; }) == 1;
}
static_assert(one_kind_is_served_by_the_layer(), "exactly one kind is served by the OpenCL layer");

constexpr std::array k_kinds = {CacheKind::programs, CacheKind::pocl,   CacheKind::cuda,
                                CacheKind::neo,      CacheKind::sycl,   CacheKind::triton,
                                CacheKind::inductor, CacheKind::dynamo, CacheKind::pycache};

} // namespace

const CacheKindRules&
rules_of(CacheKind kind)
{
  return k_rules[static_cast<std::size_t>(kind)];
}

const CacheKindRules*
find_kind_rules(std::string_view name)
{
  for (const auto& rules : k_rules) {
    if (rules.name == name) {
      return &rules;
    }
  }
  return nullptr;
}

const CacheKindRules&
opencl_layer_kind()
{
  return *std::ranges::find_if(k_rules, [](const CacheKindRules& r) { return r.served_by_opencl_layer; });
}

std::string_view
to_string(CacheKind kind)
{
  return rules_of(kind).name;
}

Result<CacheKind>
parse_cache_kind(std::string_view name)
{
  if (const auto* rules = find_kind_rules(name)) {
    return rules->kind;
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
  return rules_of(kind).environment(dir.string());
}

std::vector<EnvSetting>
installed_environment(CacheKind kind)
{
  // Inductor's kernels load in the application's process, not in its pool of
  // compile workers. A kernel that comes back from a worker is unpickled, and
  // Triton 3.6's Config.__setstate__ keeps only its own fields: the
  // found_by_coordesc mark of a result read from .best_config is lost, so
  // with coordinate descent on (mode max-autotune*) Inductor tunes every such
  // kernel again in every process, compiling configurations no cache holds
  // and rewriting .best_config (H200, torch 2.11: warm in place too). Loaded
  // in the process, the mark stays and nothing is tuned. Not at the capture,
  // where the workers compile in parallel what is not cached yet.
  if (kind == CacheKind::inductor || kind == CacheKind::dynamo) {
    return {{"TORCHINDUCTOR_COMPILE_THREADS", "1"}};
  }
  return {};
}

} // namespace prewarm::bundle
