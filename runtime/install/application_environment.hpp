// SPDX-License-Identifier: Apache-2.0
// The environment that points an application at the caches installed under
// ROOT: for each installed kind, bundle::cache_environment(kind, DIR,
// installed size); for each custom cache of an installed slice, its VARIABLE
// = DIR, or for a cache carried as a flag (bundle/custom_cache.hpp) the
// flag KEY=DIR merged into this process's value of VARIABLE (env and exec
// run in the application's environment; its own KEY=... is replaced, with
// a warning); each installed slice's runtime env lines; plus PREWARM_ROOT=ROOT;
// plus the OpenCL layer when the programs kind holds its records
// (opencl_layer_environment.hpp).
// DIR is VERSION/<kind> of the version the marker names when this runs
// (ROOT/.prewarm/versions/<id>, install_layout.hpp), or the current user's
// private copy of it (user_access.hpp): every path exported names one
// bundle, never ROOT/<kind>, which a later install re-points.
//
// How long those paths stay valid:
//   exec   holds the version and the private copies it uses (shared flock,
//          installed_version.hpp) with descriptors the application inherits:
//          no install removes them while the application or any child that
//          kept the descriptors runs (one that closes every inherited
//          descriptor gives the hold up, and is then as `env` below).
//   env    prints and exits, so it holds nothing: the version it names stays
//          until an install of another bundle finds it unheld, i.e. the next
//          install after it. A shell that evals env's output and then runs
//          the application gets one bundle, but no guarantee that it stays;
//          an install meanwhile leaves the application with missing cache
//          directories (it compiles, as without prewarm), never with a mix.
//          Start applications through `exec` where installs run beside them.
//
// ExportedPaths::root_links exports ROOT/<kind> (the links into the current
// version) instead, for caches that key entries by their directory's path and
// were captured there (`prewarm build --capture-root ROOT`): the path is then
// the one the build saw, at a price stated plainly: an application that opens
// files after a later install's switch reads the new version through the
// links, so it may see two bundles over its life (exec still holds the
// version it started with, so nothing vanishes under it).
//
// Never worse than no bundle: a cache the current user cannot use, a custom
// cache or env line that a damaged root or a newer deny list refuses, or two
// installed slices that disagree on a variable: that variable is left unset
// and a warning says why; everything else is still exported.
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/cache_kind.hpp"
#include "install/installed_version.hpp"
#include "install/recorded_environment.hpp"
#include "install/user_access.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <set>
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
  std::filesystem::path version_dir;        // where the caches are
  std::string version;                      // its id ("" for a legacy root)
  std::optional<InstalledMarker> marker;    // the marker that named it
  std::vector<UniqueFd> held;               // VersionHold::shared: the version and private copies, locked
  // A custom cache's flag was merged into this process's own value of its
  // variable: the settings depend on the caller's environment, so no start
  // record may stand for them.
  bool merges_caller_values = false;
};

// Intel's compute runtime does not create NEO_CACHE_DIR and silently caches
// nothing when it is missing (kernel-caches.md §2), so an installed neo
// directory that has disappeared is created again here (best effort).
// Nothing installed under ROOT (no marker) is Errc::failed E_NOT_INSTALLED;
// An interrupted install (ROOT/.prewarm/committing left) is E_INTERRUPTED:
// its caches may mix two bundles. `exec` turns both into a warning and
// starts the application anyway.
// ROOT is made absolute.
// ExportedPaths: install/recorded_environment.hpp (the start record's reader
// takes the same choice).

Result<ApplicationEnvironment> application_environment(const std::filesystem::path& root,
                                                       const UserAccessOptions& access = {},
                                                       VersionHold hold = VersionHold::none,
                                                       ExportedPaths paths = ExportedPaths::version);

// application_environment() with its warnings and notes logged on stderr:
// what `env` (no hold) and `exec` (shared) use.
Result<ApplicationEnvironment> environment(const std::filesystem::path& root,
                                          VersionHold hold = VersionHold::none,
                                          ExportedPaths paths = ExportedPaths::version);

// The custom caches and runtime env lines of `slice` that env/exec will not
// export under this policy (bundle/runtime_variable.hpp), one message each.
std::vector<std::string> refused_variables(const bundle::Slice& slice,
                                           const std::set<std::string, std::less<>>& policy_allowed);

// `export NAME='value'` lines for sh; single quotes inside a value are
// written as '\'' so any value survives `eval`.
std::string format_shell_exports(const std::vector<bundle::EnvSetting>& settings);

} // namespace prewarm::install
