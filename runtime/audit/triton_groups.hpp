// SPDX-License-Identifier: Apache-2.0
// Triton's group files, relocated to where a cache is installed.
//
// Format (triton python/triton/runtime/cache.py, FileCacheManager, Triton
// 2.2 to 3.x): every compiled kernel is a directory <cache>/<key>/ holding its
// files and one group file
//   __grp__<kernel>.json   {"child_paths": {"<file name>": "<ABSOLUTE path>", ...}}
// put_group() records the absolute path each file had when it was written,
// and get_group() counts the kernel as cached only if every one of those
// absolute paths exists. A cache captured at one path and installed at
// another therefore misses on every kernel (Inductor's Triton kernels too,
// under <inductor>/triton/...), while a copy that still finds the originals
// hits for the wrong reason.
//
// Relocation: a child path is rewritten to DIR/<key path>/<file name> when
// <file name> is a regular file in the group file's own directory (where
// put() puts every file of a group), DIR being the directory the kind is
// installed at. Paths that name anything else are left alone: Triton misses
// on them exactly as it would have, and nothing is pointed outside DIR. A
// group file that does not parse is left alone too (get_group() treats it as
// a miss). Runs after the slice's payload digest was verified (the signed
// bytes are checked first), before the install's file inventory is taken.
#pragma once

#include "base/error.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::audit {

// Whether a file name is a Triton group file ("__grp__*.json").
bool is_triton_group_file(std::string_view name);

// Whether a kind can hold Triton group files ("triton", "inductor").
bool kind_holds_triton_groups(std::string_view kind);

struct GroupRelocation
{
  std::uint64_t groups_seen = 0;
  std::uint64_t groups_rewritten = 0;
  std::uint64_t paths_rewritten = 0;
  std::vector<std::string> rewritten; // relative paths of the rewritten group files
};

// Relocates the group files under `kind_fd` (the kind's directory, opened
// O_DIRECTORY; walked without following symlinks) to `installed_dir`, the
// absolute path the application will see that directory at. `where` names
// the directory in messages. Each rewritten file is replaced atomically
// (a temporary beside it, renamed over it), keeping its mode.
Result<GroupRelocation> relocate_triton_groups(int kind_fd,
                                               std::string_view where,
                                               const std::filesystem::path& installed_dir);

// The same on a path (opened without following symlinks).
Result<GroupRelocation> relocate_triton_groups(const std::filesystem::path& kind_dir,
                                               const std::filesystem::path& installed_dir);

// The rewritten JSON of one group file held in `group_dir_relative` of a
// kind installed at `installed_dir`; nullopt-like empty string when nothing
// changes. `exists` says whether a file name is a regular file beside the
// group file. Separate for tests.
std::string relocated_group_json(std::string_view json,
                                 const std::filesystem::path& installed_dir,
                                 std::string_view group_dir_relative,
                                 const std::function<bool(std::string_view)>& exists,
                                 std::uint64_t& paths_rewritten);

} // namespace prewarm::audit
