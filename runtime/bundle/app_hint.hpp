// SPDX-License-Identifier: Apache-2.0
// What third-party applications showed when tried as a user would, one row
// per application beside the vetted variables of runtime_variable.hpp: the
// cache it keeps, found by the variable that locates it (a custom cache's,
// custom_cache.hpp) or by the built-in kind it fills, and what the builder
// must know of it to be right about it:
//   - a known reason why its entries miss, said beside the evidence of a
//     miss (never instead of it), with the fix;
//   - files it rewrites on every use, which are bookkeeping, not new
//     entries (a hit proof that counted them would call a hit a miss);
//   - a variable that names a FILE, not a directory: the manifest is
//     refused with the declaration that works, before anything runs;
//   - a directory it fills under HOME that is not a cache (telemetry), so
//     the hit proof does not call it a cache the bundle lacks;
//   - whether its cache holds code for the OpenCL device the job ran on, or
//     for the CPU (with which framework versions, machine code or not, keyed
//     on the kernel release or not): a custom cache's slice requires what the
//     cache depends on, no more (`prewarm inspect` says which and why).
// Adding an application is one row in app_hint.cpp and a test.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace prewarm::bundle {

// What a custom cache's entries were compiled for, as far as is known.
enum class CacheDevice {
  // The default, and every cache no row knows: code for the device the job
  // ran on. On a GPU target that is the job's OpenCL device and driver; on
  // the `cpu` target it is the CPU itself (cpu.arch, cpu.isa-level where the
  // cache holds machine code, the framework versions the build read), never
  // PoCL, which an application that kept its own cache never opened.
  job_device,
  // Code the OpenCL driver built (hashcat, clFFT, OpenCV, darktable): the
  // job's OpenCL device and driver, PoCL's on the `cpu` target.
  opencl_device,
  none, // nothing device-specific, or the application checks it itself
};

struct AppHint
{
  std::string_view app;      // "JAX", "tinygrad"
  std::string_view variable; // the cache variable that identifies it; empty: by `kind`
  std::string_view subdir;   // with `variable`: the custom cache's subdir that identifies it; empty: any
  std::string_view kind;     // the built-in kind whose misses it explains ("pocl"); empty: by `variable`
  // With `kind`: a kind the job must have selected too for the row to apply
  // (torch.compile's Triton misses have one cause and fix under the inductor
  // kind and another under the dynamo kind); empty: any selection.
  std::string_view alongside = {};
  // Said beside the evidence of a miss: "a known case: ...".
  std::string_view miss_hint = {};
  // The end of a path it rewrites (or touches) on every use: SQLite's
  // "-shm", PyTensor's "/cutils_ext/__init__.py".
  std::string_view rewritten_suffix = {};
  // A variable of the application that names a FILE (its cache database),
  // and the declaration to use instead.
  std::string_view file_variable = {};
  std::string_view names_a_file = {};
  // A directory directly under HOME it fills that is not a cache ("intel").
  std::string_view home_dir_not_a_cache = {};
  CacheDevice device = CacheDevice::job_device;
  // On the CPU (CacheDevice::job_device): the packages whose versions the
  // entries depend on, comma-separated ("jax,jaxlib": framework.jax ==, ...),
  // whether the entries are machine code for this CPU (cpu.isa-level >=),
  // and whether the application names its cache after the kernel release
  // (os.kernel-release ==).
  std::string_view frameworks = {};
  bool machine_code = true;
  bool keys_on_kernel_release = false;
  std::string_view source = {}; // where it was seen (application and version)
};

std::span<const AppHint> app_hints();

// The row of the application whose cache `variable` (kept to `subdir`)
// locates; null: none.
const AppHint* app_hint_for_cache(std::string_view variable, std::string_view subdir);
// The declaration to use when a custom cache's `variable` names a file;
// empty: it is not known to.
std::string_view names_a_file(std::string_view variable);
// The row of an application that fills the built-in `kind` when the job
// selected `selected` (kind names); null: none.
const AppHint* app_hint_for_kind(std::string_view kind, std::span<const std::string> selected);
// Whether the file `path` of a custom cache (relative to it) is rewritten
// on every use by some application (bookkeeping).
bool rewritten_on_every_use(std::string_view path);
// Whether HOME/<name> is a directory an application fills that is no cache.
bool home_dir_not_a_cache(std::string_view name);
// What a custom cache located by `variable` (kept to `subdir`) depends on;
// the default: the job's device (the CPU on the `cpu` target).
CacheDevice custom_cache_device(std::string_view variable, std::string_view subdir);

} // namespace prewarm::bundle
