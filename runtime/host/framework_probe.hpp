// SPDX-License-Identifier: Apache-2.0
// Framework versions of the application's Python: framework.torch,
// framework.triton, framework.ipex. Inductor's and Triton's caches are only
// valid for the versions that made them, so a slice of those kinds requires
// them (prewarm/command/identity.hpp), and the host reports them here.
//
// Both sides read the installed packages' metadata: the builder with the
// application's own interpreter (importlib.metadata: nothing is imported, no
// CUDA initialisation, ~30 ms), which also prints the site-packages
// directories it found them in; the bundle records those with the slice
// (bundle_manifest.hpp "site-packages"). The installer reads the same
// metadata files there without running Python (read_framework_versions), so
// the check is made where the application is (a virtualenv, conda, an init
// container that has no Python but mounts the application's environment):
// <dir>/<name>-<version>.dist-info/METADATA "Version:" for torch, triton and
// intel-extension-for-pytorch, and framework.python from the environment's
// own record of its interpreter: <prefix>/pyvenv.cfg "version =" (venv) or
// "version_info =" (virtualenv, uv), or <prefix>/conda-meta/python-X.Y.Z-*.json
// (conda), <prefix> being the directory above lib/pythonX.Y/site-packages.
//
// Which source the installer uses (framework_search below), first that applies:
//   PREWARM_PYTHON=none   no framework probe at all;
//   PREWARM_PYTHON=PATH   that interpreter runs the script (the operator said so);
//   a recorded site-packages directory that exists here: read, no Python runs;
//   `python3` in PATH runs the script.
// No interpreter or no framework is not an error: the host then reports no
// framework.* properties, and a slice that requires one is skipped with the
// reason.
#pragma once

#include "base/error.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::host {

using FrameworkVersions = std::map<std::string, std::string, std::less<>>;

inline constexpr std::string_view k_python_variable = "PREWARM_PYTHON";

// The probe program for `python -c`: one "framework.<name> <version>" line
// per installed framework.
std::string_view framework_version_script();

// Lines "framework.torch 2.11.0+cu130" -> map. Other lines, and values that
// are not printable ASCII without spaces (at most 128 bytes), are ignored.
FrameworkVersions parse_framework_versions(std::string_view output);

// Lines "site-packages DIR" of the same output -> the directories, in order,
// each once (absolute paths only).
std::vector<std::string> parse_site_packages(std::string_view output);

// PREWARM_PYTHON, or "python3"; empty when the probe is turned off.
std::string framework_python_from_environment();

// Whether PREWARM_PYTHON names an interpreter (not unset, empty or "none").
bool framework_python_given();

// The versions read from the files of one site-packages directory (above),
// without running Python. Errc::failed when the directory is absent or
// holds none of the frameworks; framework.python is left out when the
// environment records no interpreter version (a system Python's
// dist-packages).
Result<FrameworkVersions> read_framework_versions(const std::filesystem::path& site_packages);

// What the installer looks for: whether any slice requires framework.*, and
// the site-packages directories the bundle recorded for them.
struct FrameworkSearch
{
  bool wanted = true;
  std::vector<std::filesystem::path> site_packages;
};

// The framework versions by the rules above; `source` says where they came
// from ("site-packages /venv/lib/python3.11/site-packages", "python3"), or
// why there are none.
struct FoundFrameworks
{
  FrameworkVersions versions;
  std::string source;
};
FoundFrameworks find_framework_versions(const FrameworkSearch& search, const std::string& python,
                                        std::chrono::milliseconds timeout);

// Runs `<python> -c <script>` (PATH lookup) within `timeout`.
Result<FrameworkVersions> probe_framework_versions(const std::string& python, std::chrono::milliseconds timeout);

} // namespace prewarm::host
