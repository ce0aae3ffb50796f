// SPDX-License-Identifier: Apache-2.0
// The environment that points an application at the caches installed under
// ROOT: for each installed kind, bundle::cache_environment(kind, DIR,
// installed size); for each custom cache of an installed slice, its VARIABLE
// = DIR; each installed slice's runtime env lines; plus PREWARM_ROOT=ROOT;
// plus the OpenCL layer when the programs kind holds its records
// (opencl_layer_environment.hpp).
// DIR is ROOT/<kind>, or the current user's private copy of it
// (user_access.hpp).
//
// Never worse than no bundle: a cache the current user cannot use, a custom
// cache or env line that a damaged root or a newer deny list refuses, or two
// installed slices that disagree on a variable: that variable is left unset
// and a warning says why; everything else is still exported.
#pragma once

#include "base/error.hpp"
#include "bundle/cache_kind.hpp"
#include "install/user_access.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace prewarm::install {

inline constexpr std::string_view k_root_variable = "PREWARM_ROOT";

struct ApplicationEnvironment
{
  std::vector<bundle::EnvSetting> settings; // sorted by variable name
  std::vector<std::string> warnings;        // one line each: what is left unset and why
  std::vector<std::string> notes;           // private copies made by this call, with their cost
  // ROOT-relative cache ("pocl", "custom/hashcat") -> the directory this
  // user's application uses for it (ROOT/<relative>, or a private copy): what
  // `exec --audit` watches.
  std::map<std::string, std::filesystem::path> directories;
};

// Intel's compute runtime does not create NEO_CACHE_DIR and silently caches
// nothing when it is missing (kernel-caches.md §2), so an installed neo
// directory that has disappeared is created again here (best effort).
// Nothing installed under ROOT (no marker) is Errc::failed E_NOT_INSTALLED;
// An interrupted install (ROOT/.prewarm/committing left) is E_INTERRUPTED:
// its caches may mix two bundles. `exec` turns both into a warning and
// starts the application anyway.
// ROOT is made absolute.
Result<ApplicationEnvironment> application_environment(const std::filesystem::path& root,
                                                       const UserAccessOptions& access = {});

// application_environment() with its warnings and notes logged on stderr:
// what `env` and `exec` use.
Result<std::vector<bundle::EnvSetting>> environment(const std::filesystem::path& root);

// `export NAME='value'` lines for sh; single quotes inside a value are
// written as '\'' so any value survives `eval`.
std::string format_shell_exports(const std::vector<bundle::EnvSetting>& settings);

} // namespace prewarm::install
