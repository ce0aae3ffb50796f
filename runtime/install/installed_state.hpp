// SPDX-License-Identifier: Apache-2.0
// What an install root holds compared with a bundle, read without the lock:
// whether this bundle's selection is in place (installed_already), whether
// it was installed on this very host (unchanged_host_install: the marker's
// fingerprint), and the report of such an install. Shared by the installer's
// full path and its recorded fast path (recorded_install.hpp).
#pragma once

#include "install/install_records.hpp"
#include "install/installer.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::install {

// The kinds a marker names, in its order.
std::vector<std::string> kind_names(const InstalledMarker& marker);

enum class Announce { quiet, why_not };

// Whether this bundle's selection is what ROOT holds: the marker names it, no
// install was interrupted, and every kind directory is there (one fstatat per
// kind: a cache directory someone removed since is installed again rather
// than reported as present). A marker that does not parse counts as nothing
// installed (the reinstall replaces it); the rollback state stays strict.
// `why_not`: says why not, where that is news to the operator.
bool installed_already(int root_fd, const std::filesystem::path& root, const std::string& manifest_sha256,
                       const std::vector<std::string>& selected_ids, Announce announce);

// An install on the host it was made on: the marker holds this host's
// fingerprint and this manifest, and everything it names is in place; then
// the slices it selected are the ones a probe would select now, and no
// interrupted install left anything to clean up. Read without the lock, as
// for a read-only root: the marker is replaced atomically, and an install in
// progress leaves its "committing" note first.
std::optional<InstalledMarker> unchanged_host_install(const std::filesystem::path& root,
                                                      const std::string& manifest_sha256,
                                                      const std::string& fingerprint);

// The answer of an install that finds this bundle in place on an unchanged
// host (no lock taken, nothing written but the start record). `refused`: what
// env/exec will not export under this policy, said at every install, not only
// the first: a restart on a kept volume takes this path, and the operator may
// change the policy there.
void report_in_place(const std::filesystem::path& root, const InstalledMarker& installed,
                     std::vector<std::string> refused, InstallReport& report);

} // namespace prewarm::install
