// SPDX-License-Identifier: Apache-2.0
#include "bundle/cache_kind.hpp"

#include "base/encoding.hpp"

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

// Inductor's autotune cache writes <kernel>.best_config again on a hit (the
// same bytes): the choice, not compiled code. A real autotune compiles its
// candidate kernels, which are new entries of their own, so the rewrite is
// bookkeeping rather than a rebuilt entry (cache_usage.hpp: a rewrite is
// never reuse).
bool
is_torch_rewritten(std::string_view relative_path)
{
  const auto name = file_name(relative_path);
  return under_triton_staging(relative_path) || name.ends_with(".lock") || name.ends_with(".best_config");
}

// FileLock files; Triton's tmp.* staging under inductor/triton.
bool
is_torch_bookkeeping(std::string_view name)
{
  return name.ends_with(".lock") || name.starts_with("tmp.");
}

std::vector<EnvSetting>
inductor_environment(const std::string& dir)
{
  return {{"TORCHINDUCTOR_CACHE_DIR", dir},
          {"TORCHINDUCTOR_FX_GRAPH_CACHE", "1"},
          {"TORCHINDUCTOR_AUTOGRAD_CACHE", "1"},
          {"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "0"}};
}

// The Inductor cache with Dynamo's precompiled frames on (the dynamo row).
std::vector<EnvSetting>
dynamo_environment(const std::string& dir)
{
  auto env = inductor_environment(dir);
  env.insert(env.end() - 1, EnvSetting{"TORCH_CACHING_PRECOMPILE", "1"});
  return env;
}

// Why each variable and each bookkeeping name: the source of each row
// (kernel-caches.md, research notes; §17: install hygiene).
// Inductor's kernels load in the application's process, not in its pool of
// compile workers. A kernel that comes back from a worker is unpickled, and
// Triton 3.6's Config.__setstate__ keeps only its own fields: the
// found_by_coordesc mark of a result read from .best_config is lost, so with
// coordinate descent on (mode max-autotune*) Inductor tunes every such kernel
// again in every process, compiling configurations no cache holds and
// rewriting .best_config (H200, torch 2.11: warm in place too). Loaded in the
// process, the mark stays and nothing is tuned. Not at the capture, where the
// workers compile in parallel what is not cached yet.
std::vector<EnvSetting>
compile_in_the_process()
{
  return {{"TORCHINDUCTOR_COMPILE_THREADS", "1"}};
}

constexpr std::array<CacheKindRules, cache_kind_count> k_rules = {{
  {
    .kind = CacheKind::programs,
    .name = "programs",
    .source = "prewarm's own program store (runtime/store/program_record.hpp)",
    .written_by = KindWriter::opencl_layer,
    .environment = [](const std::string& dir) -> std::vector<EnvSetting> {
      return {{"PREWARM_PROGRAM_STORE", dir}};
    },
    .entry_layout = EntryLayout::program_store,
    .served_by_opencl_layer = true,
  },
  {
    .kind = CacheKind::pocl,
    .name = "pocl",
    .source = "kernel-caches.md §6 (PoCL kernel cache)",
    .written_by = KindWriter::pocl,
    .environment = [](const std::string& dir) -> std::vector<EnvSetting> {
      return {{"POCL_CACHE_DIR", dir}};
    },
    .default_location_under_home = ".cache/pocl/kcache",
    .capture_bookkeeping =
      [](std::string_view name) { return name.starts_with("tempfile_") || name.starts_with("_UNCACHED_"); },
    .entry_layout = EntryLayout::pocl_program,
    .audit_bookkeeping = is_pocl_rewritten,
  },
  // CUDA_CACHE_DISABLE=0 explicitly: some images set it to 1. The layout is
  // undocumented: ship it whole.
  {
    .kind = CacheKind::cuda,
    .name = "cuda",
    .source = "kernel-caches.md §5 (NVIDIA ComputeCache)",
    .written_by = KindWriter::nvidia_driver,
    .environment = [](const std::string& dir) -> std::vector<EnvSetting> {
      return {{"CUDA_CACHE_PATH", dir},
              {"CUDA_CACHE_DISABLE", "0"},
              {"CUDA_CACHE_MAXSIZE", std::to_string(k_cuda_cache_max)}};
    },
    .default_location_under_home = ".nv/ComputeCache",
    .entry_layout = EntryLayout::file,
    .audit_bookkeeping = [](std::string_view relative_path) { return relative_path == "index"; },
  },
  // NEO silently disables a cache whose directory does not exist or when
  // NEO_CACHE_PERSISTENT=0; 0 as max size means no eviction. config.file
  // holds the running total size: a shipped one is wrong on the target and
  // NEO recomputes it when it is missing.
  {
    .kind = CacheKind::neo,
    .name = "neo",
    .source = "kernel-caches.md §2 (Intel compute-runtime cl_cache / l0 cache)",
    .written_by = KindWriter::intel_compute_runtime,
    .environment = [](const std::string& dir) -> std::vector<EnvSetting> {
      return {{"NEO_CACHE_DIR", dir}, {"NEO_CACHE_PERSISTENT", "1"}, {"NEO_CACHE_MAX_SIZE", "0"}};
    },
    .default_location_under_home = ".cache/neo_compiler_cache",
    .capture_bookkeeping =
      [](std::string_view name) {
        return name == "config.file" || name == "stats" || is_neo_temporary(name) || name.ends_with(".trace") ||
               name.ends_with(".input");
      },
    .entry_layout = EntryLayout::neo_file,
    .audit_bookkeeping = is_neo_rewritten,
    .directory_must_exist = true,
  },
  // The persistent cache is off unless asked for (intel/llvm PR #3891);
  // SYCL_CACHE_MAX_SIZE defaults to 0 = no eviction, so it is left alone.
  {
    .kind = CacheKind::sycl,
    .name = "sycl",
    .source = "kernel-caches.md §4 (DPC++ persistent cache)",
    .written_by = KindWriter::intel_sycl_runtime,
    .environment = [](const std::string& dir) -> std::vector<EnvSetting> {
      return {{"SYCL_CACHE_DIR", dir}, {"SYCL_CACHE_PERSISTENT", "1"}};
    },
    .default_location_under_home = ".cache/libsycl_cache",
    .capture_bookkeeping = is_sycl_bookkeeping,
    .install_bookkeeping =
      [](std::string_view name) { return name == "cache_size.txt" || (name.size() > 5 && name.ends_with(".lock")); },
    .entry_layout = EntryLayout::top_directory,
    .audit_bookkeeping = [](std::string_view relative_path) { return file_name(relative_path).ends_with(".lock"); },
  },
  {
    .kind = CacheKind::triton,
    .name = "triton",
    .source = "kernel-caches.md §7 (Triton)",
    .written_by = KindWriter::triton,
    .environment = [](const std::string& dir) -> std::vector<EnvSetting> {
      return {{"TRITON_CACHE_DIR", dir}};
    },
    .default_location_under_home = ".triton/cache",
    .capture_bookkeeping = [](std::string_view name) { return name.starts_with("tmp."); },
    .entry_layout = EntryLayout::triton,
    .audit_bookkeeping = under_triton_staging,
    .relocates_triton_groups = true,
  },
  // Inductor defaults to a directory under /tmp (/tmp/torchinductor_$USER:
  // outside HOME, so always set explicitly) and the FX graph and AOTAutograd
  // caches are what make a warm start skip compilation. Bookkeeping: FileLock
  // files; Triton's tmp.* staging under inductor/triton.
  // The static CUDA launcher is off for the reason the dynamo row gives.
  {
    .kind = CacheKind::inductor,
    .name = "inductor",
    .source = "kernel-caches.md §8 (PyTorch Inductor / FX graph cache)",
    .written_by = KindWriter::pytorch,
    .environment = inductor_environment,
    .capture_bookkeeping = is_torch_bookkeeping,
    .entry_layout = EntryLayout::inductor_tree,
    .audit_bookkeeping = is_torch_rewritten,
    .relocates_triton_groups = true,
    .installed_environment = compile_in_the_process,
  },
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
  {
    .kind = CacheKind::dynamo,
    .name = "dynamo",
    .source = "kernel-caches.md §8; torch 2.11 on an H100 (bench/results/gpu-h100-any-path)",
    .written_by = KindWriter::pytorch,
    .environment = dynamo_environment,
    .capture_bookkeeping = is_torch_bookkeeping,
    .entry_layout = EntryLayout::inductor_tree,
    .audit_bookkeeping = is_torch_rewritten,
    .traced_graph_entries = "aotautograd/",
    .installed_environment = compile_in_the_process,
  },
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
  {
    .kind = CacheKind::pycache,
    .name = "pycache",
    .source = "Python's PYTHONPYCACHEPREFIX (docs.python.org: sys.pycache_prefix, PEP 3147 and 552)",
    .written_by = KindWriter::python_interpreter,
    .environment = [](const std::string& dir) -> std::vector<EnvSetting> {
      return {{"PYTHONPYCACHEPREFIX", dir}};
    },
    // Python writes <name>.pyc.<id> and renames it: a leftover is a crash's.
    .capture_bookkeeping = [](std::string_view name) { return name.find(".pyc.") != std::string_view::npos; },
    .entry_layout = EntryLayout::file,
  },
}};

// Row i is kind i: a kind without a row, or rows out of order, fails the build.
constexpr bool
every_kind_has_its_row()
{
  for (std::size_t i = 0; i < k_rules.size(); ++i) {
    if (static_cast<std::size_t>(k_rules[i].kind) != i || k_rules[i].environment == nullptr ||
        k_rules[i].source.empty()) {
      return false;
    }
  }
  return true;
}
static_assert(every_kind_has_its_row(), "k_rules needs one row per CacheKind, in declaration order, with its source");

constexpr bool
one_kind_is_served_by_the_layer()
{
  return std::ranges::count_if(k_rules, [](const CacheKindRules& r) { return r.served_by_opencl_layer; }) == 1;
}
static_assert(one_kind_is_served_by_the_layer(), "exactly one kind is served by the OpenCL layer");

// Every kind, in declaration order: read from the rows, the one list of kinds.
constexpr std::array<CacheKind, cache_kind_count> k_kinds = [] {
  std::array<CacheKind, cache_kind_count> kinds{};
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    kinds[i] = k_rules[i].kind;
  }
  return kinds;
}();

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

std::optional<KindClash>
find_kind_clash(std::span<const CacheKind> kinds)
{
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    for (std::size_t j = i + 1; j < kinds.size(); ++j) {
      // The first variable of a row names its directory.
      const auto a = rules_of(kinds[i]).environment("").front().name;
      if (kinds[i] != kinds[j] && a == rules_of(kinds[j]).environment("").front().name) {
        return KindClash{kinds[i], kinds[j], a};
      }
    }
  }
  return std::nullopt;
}

std::vector<EnvSetting>
cache_environment(CacheKind kind, const std::filesystem::path& dir, std::uint64_t /*size_hint*/)
{
  return rules_of(kind).environment(dir.string());
}

std::vector<EnvSetting>
installed_environment(CacheKind kind)
{
  auto* const settings = rules_of(kind).installed_environment;
  return settings == nullptr ? std::vector<EnvSetting>{} : settings();
}

} // namespace prewarm::bundle
