// SPDX-License-Identifier: Apache-2.0
// The version an install root holds now (install_layout.hpp), resolved once:
// the marker is read, then only that version's directory is opened, so every
// path a reader derives from it names one bundle, whatever an installer does
// beside it.
//
// Holding: a directory shared-locked with flock(2) is not removed by an
// installer or by another start (remove_unless_held). The lock belongs to the
// open file description, so a descriptor without FD_CLOEXEC keeps it across
// execve(2) and in every child that inherits it: `exec` holds the version
// (and the user's private copies) for the application's whole life this way.
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"
#include "install/install_records.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace prewarm::install {

enum class VersionHold {
  none,   // read only (env, status, an installer's check)
  shared, // flock(LOCK_SH) on the version directory while `dir_fd` is open
};

struct InstalledVersion
{
  std::filesystem::path root;
  InstalledMarker marker;
  std::filesystem::path dir; // ROOT/.prewarm/versions/<id>, or ROOT for a legacy root
  UniqueFd dir_fd;           // that directory (locked when asked)

  bool legacy() const { return marker.version.empty(); }
  std::filesystem::path manifest_path() const;
  std::filesystem::path files_path() const;
};

// Nothing installed (no marker): nullopt. A malformed marker: its error.
// A marker whose version directory is missing or not a directory (after a
// few re-reads, in case an install switched and removed it meanwhile):
// Errc::failed E_VERSION_MISSING.
Result<std::optional<InstalledVersion>> open_installed_version(const std::filesystem::path& root,
                                                               VersionHold hold = VersionHold::none);

// Opens `parent_fd`/`name` (a directory, no symlink followed), takes a shared
// flock on it and checks that the name still leads to the locked directory
// (a remover renames it away while it holds the lock exclusively).
// Errc::failed E_VERSION_MISSING when it is gone (ENOENT) or was removed
// between the open and the lock.
Result<UniqueFd> open_held_directory(int parent_fd, const std::string& name, std::string_view what);

enum class Removal { removed, held, absent };

// Removes `parent`/`name` unless a process holds it: an exclusive flock taken
// without waiting, the directory renamed to a dot name (".gone.<name>.<pid>")
// while it is held, then deleted. Never follows a symlink; a non-directory is
// removed as it is.
Result<Removal> remove_unless_held(const std::filesystem::path& parent, const std::string& name);

// Dot names that remove_unless_held() left (a remover killed mid-delete).
void remove_gone_leftovers(const std::filesystem::path& parent);

} // namespace prewarm::install
