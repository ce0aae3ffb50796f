// SPDX-License-Identifier: Apache-2.0
// What the installer does to a staged cache tree before it is published as a
// version (install_layout.hpp, version_switch.hpp), and how the install
// report names each kind's commit.
//
// Before versions, this file moved staged kinds into live ROOT/<kind>
// directories one by one (rename, RENAME_EXCHANGE, or a per-file merge on
// overlayfs) with a journal to undo them; a kill between two kinds left a
// mixed root. A version is published whole and switched by one rename, so
// none of that exists any more.
#pragma once

#include "base/directory_tree.hpp"
#include "base/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace prewarm::install {

// How a kind reached the installed version: its staged directory is renamed
// in with the whole version (the only method now; the report keeps the name).
enum class CommitMethod { renamed };
std::string_view to_string(CommitMethod method);

struct KindCommit
{
  std::string kind;
  CommitMethod method = CommitMethod::renamed;
  std::uint64_t files_moved = 0; // always 0 (was: merge only)
  std::uint64_t files_kept = 0;  // always 0 (was: merge only)
};

// Install hygiene on a staged kind directory (kernel-caches.md §17): the
// files bundle::CacheKindRules::install_bookkeeping names are removed (sycl:
// *.lock and cache_size.txt; stale locks block the DPC++ runtime, the size
// file is recomputed). Other kinds: nothing.
Status apply_kind_hygiene(int staging_fd, std::string_view kind);
// Whether apply_kind_hygiene() may remove files of `kind` (then the staged
// tree, not the manifest, says what is installed).
bool kind_hygiene_removes_files(std::string_view kind);

// The tree helpers (base/directory_tree.hpp) the installer uses on a staged
// or installed kind directory: chown_tree (the trust policy's install.owner),
// count_tree.
using prewarm::count_tree;
using prewarm::TreeCounts;

} // namespace prewarm::install
