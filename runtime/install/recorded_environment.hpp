// SPDX-License-Identifier: Apache-2.0
// The environment `exec` and `env` export, read from the start record that
// the install wrote into the version (install_records.hpp): the marker, one
// record, a lock and a few access checks, with no manifest, no file list and
// no library beyond base. What application_environment.hpp works out in
// full, the install worked out once for an application that uses the caches
// in place.
//
// The record answers only when it is sure to give what the full computation
// gives: written by this runtime version, for this root and this manifest,
// no install interrupted, and every cache directory it names usable in place
// by the current user (readable, and writable where the application writes).
// Anything else (nothing installed, an older root, a private copy needed, a
// directory gone) is nullopt: the caller takes the full computation, which
// says what is wrong and repairs what it repairs.
#pragma once

#include "base/files.hpp"
#include "install/installed_version.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prewarm::install {

enum class ExportedPaths {
  version,    // VERSION/<kind>: one bundle for the application's life
  root_links, // ROOT/<kind>: the build's --capture-root paths (application_environment.hpp)
};

struct RecordedEnvironment
{
  std::vector<std::pair<std::string, std::string>> settings; // sorted by variable
  std::vector<std::string> warnings;                          // as application_environment() words them
  std::vector<UniqueFd> held;                                 // VersionHold::shared: the version, locked
};

std::optional<RecordedEnvironment> recorded_environment(const std::filesystem::path& root, VersionHold hold,
                                                        ExportedPaths paths);

// "export NAME='VALUE'\n", the value single-quoted for a POSIX shell: the one
// shape `env --format sh` prints, from the record (the front) or in full.
std::string shell_export_line(std::string_view name, std::string_view value);

} // namespace prewarm::install
