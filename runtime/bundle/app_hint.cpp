// SPDX-License-Identifier: Apache-2.0
#include "bundle/app_hint.hpp"

#include <algorithm>
#include <array>

namespace prewarm::bundle {

namespace {

constexpr std::string_view k_coordesc_again =
  "a known case: torch.compile's max-autotune modes tune a kernel again by coordinate descent when its "
  ".best_config result loses its tuned mark, compiling configurations no cache holds and rewriting "
  ".best_config: Inductor's compile workers return kernels unpickled, and Triton 3.6's Config drops the "
  "mark. Where the dynamo kind is installed (and in this proof) prewarm sets TORCHINDUCTOR_COMPILE_THREADS=1 "
  "so that the kernels load in the application's process; an application that sets "
  "TORCHINDUCTOR_COMPILE_THREADS or TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER itself brings the retuning back";

constexpr std::array k_app_hints = {
  AppHint{
    .app = "JAX",
    .variable = "JAX_COMPILATION_CACHE_DIR",
    .subdir = "",
    .kind = "",
    // jax/_src/compiler.py: with the persistent cache on, the compile options
    // that jax/_src/cache_key.py hashes carry
    // xla_gpu_per_fusion_autotune_cache_dir = <cache dir>/...
    .miss_hint =
      "a known case: JAX releases that hash <cache dir>/xla_gpu_per_fusion_autotune_cache_dir into their "
      "cache keys (0.10.2 does) hit only at the path the entries were made at: build with --capture-root "
      "ROOT, install at ROOT and export with --paths root, or set JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=none "
      "in the model's env and runtime_env",
    // XLA's CPU executables are machine code for the build CPU's features;
    // jax and jaxlib hash their own versions into the key.
    .frameworks = "jax,jaxlib",
    .source = "JAX 0.10.2 here missed every entry at another path; 0.11.2 on the GPU machine hit",
  },
  AppHint{
    .app = "PyTensor",
    .variable = "PYTENSOR_FLAGS", // the flag base_compiledir={dir} (custom_cache.hpp)
    .subdir = "",
    .kind = "",
    // Its C modules are built by the host compiler for this CPU, keyed by
    // PyTensor's version, and kept under compiledir_<platform.platform()>,
    // which names the kernel release: on another kernel the entries sit
    // beside a directory PyTensor never opens.
    // Every import touches compiledir/cutils_ext/__init__.py (an empty file,
    // pathlib's touch(exist_ok=True)): its mtime moves on a hit.
    .rewritten_suffix = "/cutils_ext/__init__.py",
    .frameworks = "pytensor",
    .keys_on_kernel_release = true,
    .source = "PyTensor 3.0.7, C linker (cvm), CPU",
  },
  AppHint{
    .app = "hashcat",
    .variable = "XDG_CACHE_HOME",
    .subdir = "hashcat",
    .kind = "",
    // Kernels as the OpenCL driver built them (it keys them by device and
    // driver itself, so another device only misses).
    .device = CacheDevice::opencl_device,
    .source = "hashcat 6.2 on PoCL and NEO",
  },
  AppHint{
    .app = "clFFT",
    .variable = "CLFFT_CACHE_PATH",
    .subdir = "",
    .kind = "",
    .device = CacheDevice::opencl_device, // OpenCL program binaries, named by device only
    .source = "clFFT 2.12 on PoCL",
  },
  AppHint{
    .app = "OpenCV",
    .variable = "XDG_CACHE_HOME",
    .subdir = "opencv",
    .kind = "",
    .device = CacheDevice::opencl_device, // its OpenCL module's program binaries
    .source = "OpenCV 4.6 OpenCL on PoCL",
  },
  AppHint{
    .app = "darktable",
    .variable = "XDG_CACHE_HOME",
    .subdir = "darktable",
    .kind = "",
    .device = CacheDevice::opencl_device, // cached_v1_kernels_for_<device>: OpenCL binaries
    .source = "darktable-cli 4.2 on PoCL",
  },
  AppHint{
    .app = "pyopencl",
    .variable = "",
    .subdir = "",
    .kind = "pocl",
    // PoCL keeps no source in its cache, so its key inputs cannot be
    // compared: the case seen in practice is named as such, not as the cause.
    .miss_hint = "a known case: pyopencl's own cache adds a fresh constant to every source it builds; "
                 "PYOPENCL_NO_CACHE=1 in the model's env and runtime_env turns it off",
    .source = "pyopencl 2024.1 on PoCL 3.1",
  },
  AppHint{
    .app = "torch.compile",
    .variable = "",
    .subdir = "",
    .kind = "triton",
    .alongside = "inductor",
    // The inductor kind built without --capture-root, proved at another path
    // on the H100 (torch 2.11, Triton 3.6): "triton: 178 reused, 40 new", the
    // new entries' .llir naming the kernels' source under the copy's path.
    // The dynamo kind serves the same kernels through Dynamo's saved frames
    // and hits at any path (0 new).
    .miss_hint = "a known case: torch.compile's inductor kind, whose Triton kernels are keyed with the path of "
                 "their generated source under TORCHINDUCTOR_CACHE_DIR, hits only at the path it was captured at: "
                 "with torch 2.8 or later use kinds [triton, dynamo, cuda], which hit at any path; else build with "
                 "--capture-root ROOT, install at ROOT and export with --paths root",
    .source = "torch 2.11 and Triton 3.6 on an H100",
  },
  // torch.compile with the dynamo kind: Triton kernels compiled again and
  // .best_config rewritten, where Inductor tuned again by coordinate descent
  // (mode max-autotune*). Seen warm in place and at another path until the
  // installed kinds loaded kernels in-process (the installed_environment column, cache_kind.hpp).
  AppHint{
    .app = "torch.compile",
    .variable = "",
    .subdir = "",
    .kind = "triton",
    .alongside = "dynamo",
    .miss_hint = k_coordesc_again,
    .source = "torch 2.11 and Triton 3.6 on an H200, mode max-autotune-no-cudagraphs",
  },
  AppHint{
    .app = "torch.compile",
    .variable = "",
    .subdir = "",
    .kind = "dynamo",
    .miss_hint = k_coordesc_again,
    .source = "torch 2.11 and Triton 3.6 on an H200, mode max-autotune-no-cudagraphs",
  },
  AppHint{
    .app = "tinygrad",
    .variable = "XDG_CACHE_HOME",
    .subdir = "tinygrad",
    .kind = "",
    // tinygrad/helpers.py: its SQLite cache runs in WAL mode; every
    // connection rewrites the shared-memory index <db>-shm, even when it
    // compiles nothing (0 compile calls, exec 1.02x warm).
    .rewritten_suffix = "-shm",
    .file_variable = "CACHEDB",
    .names_a_file = "CACHEDB names tinygrad's SQLite file, not a directory: declare the cache as "
                    "{variable: XDG_CACHE_HOME, subdir: tinygrad} (tinygrad keeps $XDG_CACHE_HOME/tinygrad/cache.db)",
    .device = CacheDevice::none, // its keys name the device and compiler itself; CPU backends use no OpenCL
    .source = "tinygrad 0.14",
  },
  AppHint{
    .app = "OpenVINO",
    .variable = "",
    .subdir = "",
    .kind = "",
    // openvino_telemetry writes ~/intel/openvino_telemetry (a client id and
    // opt-in state) on every import: no compiled code.
    .home_dir_not_a_cache = "intel",
    .source = "OpenVINO 2026.4.1 from PyPI",
  },
  AppHint{
    .app = "Numba",
    .variable = "NUMBA_CACHE_DIR",
    .subdir = "",
    .kind = "",
    // numba/core/caching.py: each index records the CPU name and features
    // it was compiled for and is recompiled on another CPU; no OpenCL.
    .device = CacheDevice::none,
    .source = "numba 0.68",
  },
  AppHint{
    .app = "Taichi",
    .variable = "TI_OFFLINE_CACHE_FILE_PATH",
    .subdir = "",
    .kind = "",
    // Its offline cache (<key>.tic, ticache.tcb) holds what Taichi's own
    // backends compiled (LLVM host code on the CPU backend); Taichi has no
    // OpenCL backend. A copy at another path served the kernel ("Create
    // kernel ... from cache") and no file was rewritten.
    .device = CacheDevice::none,
    .source = "taichi 1.7.4, CPU backend",
  },
};

} // namespace

std::span<const AppHint>
app_hints()
{
  return k_app_hints;
}

const AppHint*
app_hint_for_cache(std::string_view variable, std::string_view subdir)
{
  const auto it = std::ranges::find_if(k_app_hints, [&](const AppHint& h) {
    // A row's subdir, or a directory below it ("hashcat/kernels").
    return !h.variable.empty() && h.variable == variable &&
           (h.subdir.empty() || h.subdir == subdir ||
            (subdir.size() > h.subdir.size() && subdir.starts_with(h.subdir) && subdir[h.subdir.size()] == '/'));
  });
  return it == k_app_hints.end() ? nullptr : &*it;
}

std::string_view
names_a_file(std::string_view variable)
{
  const auto it = std::ranges::find_if(k_app_hints, [&](const AppHint& h) {
    return !h.file_variable.empty() && h.file_variable == variable;
  });
  return it == k_app_hints.end() ? std::string_view() : it->names_a_file;
}

const AppHint*
app_hint_for_kind(std::string_view kind, std::span<const std::string> selected)
{
  const auto it = std::ranges::find_if(k_app_hints, [&](const AppHint& h) {
    return !h.kind.empty() && h.kind == kind &&
           (h.alongside.empty() || std::ranges::find(selected, h.alongside) != selected.end());
  });
  return it == k_app_hints.end() ? nullptr : &*it;
}

bool
rewritten_on_every_use(std::string_view path)
{
  return std::ranges::any_of(k_app_hints, [&](const AppHint& h) {
    return !h.rewritten_suffix.empty() && path.size() > h.rewritten_suffix.size() && path.ends_with(h.rewritten_suffix);
  });
}

bool
home_dir_not_a_cache(std::string_view name)
{
  return std::ranges::any_of(k_app_hints, [&](const AppHint& h) {
    return !h.home_dir_not_a_cache.empty() && h.home_dir_not_a_cache == name;
  });
}

CacheDevice
custom_cache_device(std::string_view variable, std::string_view subdir)
{
  const auto* hint = app_hint_for_cache(variable, subdir);
  return hint ? hint->device : CacheDevice::job_device;
}

} // namespace prewarm::bundle
