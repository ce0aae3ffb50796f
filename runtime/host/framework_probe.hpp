// SPDX-License-Identifier: Apache-2.0
// Framework versions of the application's Python: framework.torch,
// framework.triton, framework.ipex. Inductor's and Triton's caches are only
// valid for the versions that made them, so a slice of those kinds requires
// them (prewarm/command/identity.hpp), and the host reports them here.
//
// Both sides read the installed packages' metadata (importlib.metadata) with
// the same script: nothing is imported (no CUDA initialisation, ~30 ms), and
// the builder and the runtime compare like with like.
//
// The interpreter: PREWARM_PYTHON, else `python3` in PATH; PREWARM_PYTHON=none
// turns the probe off. No interpreter or no framework is not an error: the
// host then reports no framework.* properties, and a slice that requires
// one is skipped with the reason.
#pragma once

#include "base/error.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace prewarm::host {

using FrameworkVersions = std::map<std::string, std::string, std::less<>>;

inline constexpr std::string_view k_python_variable = "PREWARM_PYTHON";

// The probe program for `python -c`: one "framework.<name> <version>" line
// per installed framework.
std::string_view framework_version_script();

// Lines "framework.torch 2.11.0+cu130" -> map. Other lines, and values that
// are not printable ASCII without spaces (at most 128 bytes), are ignored.
FrameworkVersions parse_framework_versions(std::string_view output);

// PREWARM_PYTHON, or "python3"; empty when the probe is turned off.
std::string framework_python_from_environment();

// Runs `<python> -c <script>` (PATH lookup) within `timeout`.
Result<FrameworkVersions> probe_framework_versions(const std::string& python, std::chrono::milliseconds timeout);

} // namespace prewarm::host
