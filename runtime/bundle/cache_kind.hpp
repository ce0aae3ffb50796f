// SPDX-License-Identifier: Apache-2.0
// The kinds of kernel cache a bundle carries. Each kind is one top-level
// directory of a slice ("pocl/...", "neo/...") and one set of environment
// variables that points an application at an installed copy of it.
// Every rule that differs by kind (its variables, where its driver writes
// without them, what the capture and the installer must not keep, how the
// audit groups its files into entries) is one row of one table (cache_kind.cpp,
// CacheKindRules), read by the builder's capture, the runtime's installer and
// the audit alike. The builder's own rules per kind (requirements, capture
// traps) are the rows of command/kind_builder_rules.cpp. Both tables are
// indexed by CacheKind and fail the build when a kind has no row.
// Why each rule: see docs/research/kernel-caches.md.
#pragma once

#include "base/error.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
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
  dynamo,   // the inductor cache plus Dynamo's precompiled frames (TORCH_CACHING_PRECOMPILE=1)
  pycache,  // Python bytecode of the modules the program imports (PYTHONPYCACHEPREFIX)
  // A new kind goes last, before nothing: cache_kind_count counts up to here.
};

// The number of kinds; the tables indexed by CacheKind have this many rows
// and static_assert that row i is kind i.
inline constexpr std::size_t cache_kind_count = static_cast<std::size_t>(CacheKind::pycache) + 1;

// How the audit groups a kind's files into entries and names them
// (audit/cache_entries.hpp gives each format).
enum class EntryLayout {
  top_directory, // one entry per top-level directory, named by it
  triton,        // <hash>/: one entry per directory, named by its kernels
  inductor_tree, // fxgraph/, aotautograd/, triton/, dynamo/ subtrees (inductor, dynamo)
  pocl_program,  // <2 chars>/<38 chars>/: one program, its kernel directories beside
  program_store, // <2 hex>/<key>.<ext>: one record per key
  neo_file,      // one program per file (<hash>.cl_cache / .l0_cache / .ocloc_cache)
  file,          // one opaque entry per file (cuda, pycache)
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

// Which program writes a kind's entries: the one fact about a kind that
// decides where the builder can make it (the plan: a kind Intel's runtimes
// write runs where an Intel driver is, the virtual device when the card is
// absent; the OpenCL layer's kind is recorded by the AOT executors), and
// which interpreter options would stop its capture (the manifest).
enum class KindWriter {
  opencl_layer,          // prewarm's OpenCL layer (served by it, never by the driver)
  pocl,                  // PoCL
  nvidia_driver,         // the NVIDIA driver's JIT
  intel_compute_runtime, // Intel's compute runtime (NEO)
  intel_sycl_runtime,    // DPC++'s SYCL runtime over Intel's drivers
  triton,                // Triton's compiler
  pytorch,               // PyTorch (Inductor, Dynamo)
  python_interpreter,    // the Python interpreter itself (bytecode)
};

// The rules of one kind (a row of cache_kind.cpp names the fields it sets;
// the others keep the values below).
struct CacheKindRules
{
  CacheKind kind;
  std::string_view name; // to_string(kind)
  // Where the rules of the row come from (docs/research/kernel-caches.md).
  std::string_view source;
  KindWriter written_by;
  // The variables (cache_environment() below): `dir` as it is written.
  std::vector<EnvSetting> (*environment)(const std::string& dir);
  // Where the driver writes when the variables are not set, relative to HOME
  // (empty: nowhere under HOME); a capture folds it into staging.
  std::string_view default_location_under_home = {};
  // Capture hygiene: driver bookkeeping beside the entries that must not be
  // packaged (locks, temporaries, size accounting); `name` is one path
  // component. Null: the kind ships whole.
  bool (*capture_bookkeeping)(std::string_view name) = nullptr;
  // Install hygiene: files the installer removes from a staged kind before it
  // goes live (a stale lock would hide an entry forever). Null: the slice is
  // installed as it is, and its manifest says what is installed.
  bool (*install_bookkeeping)(std::string_view name) = nullptr;
  // Audit: how files group into entries, and which files a run writes on a
  // hit as on a miss (`relative_path` within the kind; neither reuse nor a
  // miss). Null: no such files.
  EntryLayout entry_layout;
  bool (*audit_bookkeeping)(std::string_view relative_path) = nullptr;
  // Triton group files (__grp__*.json) that name their kernels by absolute
  // path: the installer and the proof copy rewrite them to where the kind
  // is installed (audit/triton_groups.hpp).
  bool relocates_triton_groups = false;
  // Audit: entries under this prefix that a run looked up or wrote hold a
  // graph traced in that process (dynamo: "aotautograd/"). A frame loaded
  // from Dynamo's precompiled entries runs the backend bundled with it and
  // looks nothing up there (torch 2.8-2.11: autograd_cache_hit stays 0), so
  // such an entry is the evidence that a frame was traced although the kind
  // was meant to spare it: no entry saved for it, rejected by PyTorch
  // (changed source, another torch) or guards that failed. Empty: the kind
  // has no such entries.
  std::string_view traced_graph_entries = {};
  // Variables the kind adds where it is installed, beside `environment`:
  // set by prewarm-runtime env/exec and by the builder's hit proof (which
  // stands for them), never at the capture. They say how an application
  // should use a cache that already holds its work. Null: none.
  std::vector<EnvSetting> (*installed_environment)() = nullptr;
  // Served by prewarm's OpenCL layer, which exec points the loader at: the
  // layer's audit events are this kind's, and its environment is worked out
  // at every exec (opencl_layer_environment.hpp), never recorded. Such a
  // kind is only read at run time: another user needs no private copy of it.
  bool served_by_opencl_layer = false;
  // The driver caches nothing when the directory its variable names is
  // missing, so exec creates an installed one again where it disappeared.
  bool directory_must_exist = false;

  bool written_by_intel_runtime() const
  {
    return written_by == KindWriter::intel_compute_runtime || written_by == KindWriter::intel_sycl_runtime;
  }
};

const CacheKindRules& rules_of(CacheKind kind);
// The kind's installed_environment column's settings; empty for most kinds.
std::vector<EnvSetting> installed_environment(CacheKind kind);
// The rules of the kind named `name` (a slice's top-level directory); null
// for a directory that is no kind ("custom").
const CacheKindRules* find_kind_rules(std::string_view name);

// The one kind whose rows say served_by_opencl_layer.
const CacheKindRules& opencl_layer_kind();

// The kinds of `kinds` that set one variable of the same name: two such kinds
// point one cache at two places (inductor and dynamo: TORCHINDUCTOR_CACHE_DIR),
// so a workload names one of them. Null when none.
struct KindClash
{
  CacheKind first;
  CacheKind second;
  std::string variable;
};
std::optional<KindClash> find_kind_clash(std::span<const CacheKind> kinds);

} // namespace prewarm::bundle
