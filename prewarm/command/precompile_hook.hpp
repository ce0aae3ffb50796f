// SPDX-License-Identifier: Apache-2.0
// The capture side of the dynamo kind (and of the inductor kind: the ptxas
// pin below). PyTorch (2.8 to at least 2.11) loads
// Dynamo's precompiled frames by itself when TORCH_CACHING_PRECOMPILE=1, but
// writes them only when the program calls torch.compiler.save_cache_artifacts().
// So that an unmodified warm-up still leaves them behind, the capture puts a
// sitecustomize.py first on PYTHONPATH that makes that call at exit and runs
// the sitecustomize it shadows (if any), as coverage and tracers do. It also
// mends two things torch 2.11 gets wrong: the module it records for decorated
// frames (else the loaded guards fail and Dynamo traces again), and the names
// of the globals it installs (numbered apart, else tracing a loaded frame
// whose guards fail stops on a name clash). Where the program imports torch
// it sets TRITON_PTXAS_PATH to torch's bundled ptxas, as torch's compile
// workers do, so that what the program's own process compiles (coordinate
// descent in mode max-autotune*) is keyed as where the bundle is installed,
// where kernels load in the process. Its source is precompile_hook.py
// beside this file, compiled in. The hook is for the capture only: the
// runtime environment (env/exec) sets no PYTHONPATH, and an application that
// compiles something new at its destination simply compiles it.
#pragma once

#include "base/error.hpp"
#include "process/environment.hpp"

#include <filesystem>
#include <string_view>

namespace prewarm::command {

// The hook's source (a sitecustomize module).
std::string_view precompile_hook_source();

// Writes `dir`/sitecustomize.py (dir is created).
Status write_precompile_hook(const std::filesystem::path& dir);

// Puts `dir` first on PYTHONPATH in `env` and keeps what was there.
void add_precompile_hook(process::Environment& env, const std::filesystem::path& dir);

} // namespace prewarm::command
