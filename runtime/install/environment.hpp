// SPDX-License-Identifier: Apache-2.0
// The environment that points an application at the caches installed under
// ROOT: for each installed kind, bundle::cache_environment(kind, ROOT/kind,
// installed size), plus PREWARM_ROOT=ROOT, plus the OpenCL layer when the
// programs kind holds its records (opencl_layer_environment.hpp).
#pragma once

#include "base/error.hpp"
#include "bundle/cache_kind.hpp"

#include <filesystem>
#include <vector>

namespace prewarm::install {

inline constexpr std::string_view k_root_variable = "PREWARM_ROOT";

// Intel's compute runtime does not create NEO_CACHE_DIR and silently caches
// nothing when it is missing (kernel-caches.md §2), so an installed neo
// directory that has disappeared is created again here (best effort).
// Nothing installed under ROOT (no marker) is Errc::failed E_NOT_INSTALLED;
// `exec` turns that into a warning and starts the application anyway.
// Sorted by variable name; ROOT is made absolute.
Result<std::vector<bundle::EnvSetting>> environment(const std::filesystem::path& root);

// `export NAME='value'` lines for sh; single quotes inside a value are
// written as '\'' so any value survives `eval`.
std::string format_shell_exports(const std::vector<bundle::EnvSetting>& settings);

} // namespace prewarm::install
