// SPDX-License-Identifier: Apache-2.0
// Enabling the OpenCL layer (runtime/layer) for an application whose
// installed programs cache holds records the layer made: OPENCL_LAYERS names
// the layer library installed beside prewarm-runtime (../lib/prewarm/, or
// ../layer/ in a build tree; PREWARM_OPENCL_LAYER overrides), and
// PREWARM_LAYER=serve. Programs recorded by prewarm's own engine (no
// layer-format field) need no layer: `prewarm run` serves them itself.
// Intel AOT binaries (aot/<ocloc-device>/ targets) enable it too: those of a
// command workload's recorded programs reach the application only through
// the layer (those of prewarm's engine are served by it first either way).
#pragma once

#include "bundle/cache_kind.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::install {

// True when some record under `programs_dir` was written by the layer, or
// it holds an AOT target record (aot/*/target.*).
bool holds_layer_records(const std::filesystem::path& programs_dir);

// The layer library beside the running executable (prewarm-runtime or
// prewarm), or nullopt when it is not installed.
std::optional<std::filesystem::path> find_opencl_layer();

// OPENCL_LAYERS (an existing value kept after ours) and PREWARM_LAYER=serve,
// or nothing (with a warning when records exist but the library does not).
std::vector<bundle::EnvSetting> opencl_layer_environment(const std::filesystem::path& programs_dir);

} // namespace prewarm::install
