// SPDX-License-Identifier: Apache-2.0
// Moving extracted caches from a staging directory into the live install
// root, one kind directory at a time, so that readers see the old cache or
// the new one and a failure can be undone.
//
// For each kind (both directories on one filesystem, ROOT/.prewarm/staging.X/<kind>
// and ROOT/<kind>):
//   ROOT/<kind> absent   renameat2(RENAME_NOREPLACE): the new tree appears whole
//   ROOT/<kind> present  renameat2(RENAME_EXCHANGE): old and new swap in one
//                        step; the old tree is left in staging and removed
//                        with it after the install is recorded
//   EINVAL/ENOSYS (no exchange on this filesystem) or EXDEV (overlayfs: the
//   directory lives in a lower image layer and cannot be renamed):
//                        per-file merge. Every file is first checked against
//                        the live tree: absent -> moved in (NOREPLACE, or
//                        link+unlink); identical -> kept; different ->
//                        E_CONFLICT before anything is moved. Nothing is
//                        deleted from the live tree; these caches are
//                        content-addressed, so extra files are harmless.
// Everything is fd-relative and never follows a symlink: a symlink where the
// live tree should have a directory is E_TARGET_UNSAFE.
//
// Every step is recorded in a CommitJournal; undo() reverses them (exchange
// back, rename back, remove created directories), which leaves the live tree
// as it was.
#pragma once

#include "base/directory_tree.hpp"
#include "base/error.hpp"
#include "base/files.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::install {

enum class CommitStrategy {
  swap_directories, // rename/exchange whole kind directories; merge where the filesystem cannot
  merge_files,      // per-file merge only: the fallback path, also forced by tests
};

enum class CommitMethod { renamed, exchanged, merged };
std::string_view to_string(CommitMethod method);

struct KindCommit
{
  std::string kind;
  CommitMethod method = CommitMethod::renamed;
  std::uint64_t files_moved = 0; // merge only
  std::uint64_t files_kept = 0;  // merge only: identical files already live
};

class CommitJournal
{
public:
  // Non-owning: both fds must stay open until the journal is done.
  CommitJournal(int root_fd, int staging_fd) : m_root_fd(root_fd), m_staging_fd(staging_fd) {}

  // Reverses every recorded step, last first; goes on after a failed step and
  // reports the first failure.
  Status undo();
  bool empty() const { return m_steps.empty(); }

  // Directories (relative to the root) whose entries changed: fsync them.
  const std::set<std::string>& touched_directories() const { return m_touched; }

  enum class StepType { renamed_directory, exchanged_directory, created_directory, moved_file };
  void record(StepType type, std::string relative_path);

private:
  struct Step
  {
    StepType type;
    std::string path; // relative to root and staging alike
  };
  int m_root_fd;
  int m_staging_fd;
  std::vector<Step> m_steps;
  std::set<std::string> m_touched;
};

// Moves staging/<kind> into root/<kind> as described above.
Result<KindCommit> commit_kind(int root_fd,
                               int staging_fd,
                               std::string_view kind,
                               CommitStrategy strategy,
                               CommitJournal& journal);

// Install hygiene on a staged kind directory (kernel-caches.md §17): the
// files bundle::CacheKindRules::install_bookkeeping names are removed (sycl:
// *.lock and cache_size.txt; stale locks block the DPC++ runtime, the size
// file is recomputed). Other kinds: nothing.
Status apply_kind_hygiene(int staging_fd, std::string_view kind);
// Whether apply_kind_hygiene() may remove files of `kind` (then the staged
// tree, not the manifest, says what is installed).
bool kind_hygiene_removes_files(std::string_view kind);

// The tree helpers (base/directory_tree.hpp) the installer uses on a staged
// or live kind directory: chown_tree (the trust policy's install.owner),
// count_tree.
using prewarm::count_tree;
using prewarm::TreeCounts;

} // namespace prewarm::install
