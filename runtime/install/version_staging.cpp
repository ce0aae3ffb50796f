// SPDX-License-Identifier: Apache-2.0
#include "install/version_staging.hpp"

#include "audit/triton_groups.hpp"
#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/log.hpp"
#include "bundle/bundle_files.hpp"
#include "install/tree_commit.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>

namespace prewarm::install {

namespace {

namespace fs = std::filesystem;

// The kinds to commit: the first component of every path the selected
// slices list (not a listing of staging, where a process with our uid could
// have added or swapped names), each of which must be a real directory in
// staging (E_TARGET_UNSAFE if it became a symlink or a file).
Result<std::vector<std::string>>
staged_kinds(int staging_fd, const fs::path& staging, const SliceSelection& selection)
{
  std::set<std::string> kinds;
  const auto add = [&](const std::string& path) { kinds.insert(path.substr(0, path.find('/'))); };
  for (const auto& s : selection.selected) {
    for (const auto& dir : s.slice->directories) {
      add(dir);
    }
    for (const auto& file : s.slice->files) {
      add(file.path);
    }
  }
  for (const auto& kind : kinds) {
    struct stat st
    {};
    if (::fstatat(staging_fd, kind.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(tree_io_error("cannot stat", (staging / kind).string(), errno));
    }
    if (!S_ISDIR(st.st_mode)) {
      return fail(Errc::verify,
                  fmt::format("{} in staging is no longer a directory (replaced during the install?)",
                              in_quotes((staging / kind).string())),
                  "E_TARGET_UNSAFE");
    }
  }
  return std::vector<std::string>(kinds.begin(), kinds.end());
}

// Files and bytes the extracted slices put under `kind`: every listed file
// was checked present with its size, so the manifest is the count (walking
// a 40,000-file tree again costs about a second of metadata calls).
TreeCounts
declared_counts(const SliceSelection& selection, std::string_view kind)
{
  TreeCounts counts;
  for (const auto& s : selection.selected) {
    for (const auto& file : s.slice->files) {
      if (file.path.size() > kind.size() && file.path.starts_with(kind) && file.path[kind.size()] == '/') {
        ++counts.files;
        counts.bytes += file.size;
      }
    }
  }
  return counts;
}

// Hygiene, Triton's group files, then the count of one staged kind.
Result<InstalledKind>
prepare_kind(int staging_fd, const SliceSelection& selection, const fs::path& version_dir, const std::string& kind)
{
  PW_TRY(apply_kind_hygiene(staging_fd, kind));
  // Triton finds a kernel's files by the absolute paths its group files
  // name (audit/triton_groups.hpp): point them at the version's <kind>
  // (what env/exec export; ROOT/<kind> would follow the next install), after
  // the payload digest was checked and before the inventory is taken.
  bool rewritten = false;
  if (audit::kind_holds_triton_groups(kind)) {
    const auto installed_at = version_dir / kind;
    PW_ASSIGN(UniqueFd kind_fd, open_directory_beneath(staging_fd, kind));
    PW_ASSIGN(const auto relocated, audit::relocate_triton_groups(kind_fd.get(), kind, installed_at));
    if (relocated.groups_rewritten > 0) {
      log::verbose("{}: {} Triton group files point at {} now", kind, relocated.groups_rewritten,
                   installed_at.string());
      rewritten = true;
    }
  }
  TreeCounts counts;
  if (kind_hygiene_removes_files(kind) || rewritten) {
    PW_ASSIGN(counts, count_tree(staging_fd, kind));
  } else {
    counts = declared_counts(selection, kind);
  }
  return InstalledKind{kind, counts.files, counts.bytes};
}

// Each staged file's state for the install's file list. The digest comes
// from the signed manifest, which extraction checked file by file, so the
// install hashes nothing again; only a file the install changed (a Triton
// group file pointed at this version) or one whose size differs from the
// manifest is hashed.
Result<audit::FileStates>
installed_states(const fs::path& kind_dir, const SliceSelection& selection, const std::string& kind)
{
  PW_ASSIGN(auto states, audit::snapshot_files(kind_dir, 0));
  std::map<std::string_view, const bundle::FileEntry*, std::less<>> declared;
  for (const auto& s : selection.selected) {
    for (const auto& file : s.slice->files) {
      if (file.path.size() > kind.size() && file.path.starts_with(kind) && file.path[kind.size()] == '/') {
        declared.emplace(std::string_view(file.path).substr(kind.size() + 1), &file);
      }
    }
  }
  const bool groups = audit::kind_holds_triton_groups(kind);
  for (auto& [relative, state] : states) {
    const auto it = declared.find(relative);
    const bool relocated = groups && audit::is_triton_group_file(fs::path(relative).filename().string());
    if (it != declared.end() && it->second->size == state.size && !relocated) {
      state.sha256 = it->second->sha256;
      continue;
    }
    PW_ASSIGN(const auto hashed, audit::snapshot_one(kind_dir, relative));
    state = hashed;
  }
  return states;
}

} // namespace

Status
extract_selected_slices(const fs::path& bundle_dir, const SliceSelection& selection, int staging_fd,
                        const bundle::ExtractLimits& limits)
{
  for (const auto& s : selection.selected) {
    const auto context = fmt::format("slice {}", s.slice->id);
    PW_ASSIGN_CTX(const auto payload, context, bundle::open_slice_payload(bundle_dir, s.slice->id));
    // extract_slice() checks the payload's size and digest before libarchive
    // reads a byte of it.
    PW_TRY_CTX(context, bundle::extract_slice(payload.get(), *s.slice, staging_fd, limits));
  }
  return {};
}

Result<StagedVersion>
prepare_staged_version(int staging_fd, const fs::path& staging, const SliceSelection& selection,
                       const fs::path& version_dir, const std::optional<bundle::InstallOwner>& owner, SyncMethod sync)
{
  StagedVersion staged;
  PW_ASSIGN(staged.kinds, staged_kinds(staging_fd, staging, selection));
  for (const auto& kind : staged.kinds) {
    PW_ASSIGN(auto counted, prepare_kind(staging_fd, selection, version_dir, kind));
    staged.counts.push_back(std::move(counted));
  }
  // What is installed, file by file: what `exec --audit` / `status --audit`
  // compare with to tell reused from compiled anew since install.
  for (const auto& kind : staged.kinds) {
    PW_ASSIGN(staged.inventory[kind], audit::list_files(staging / kind));
    PW_ASSIGN(staged.states[kind], installed_states(staging / kind, selection, kind));
  }
  // Owners come from the policy, never from the archive (whose uids the
  // reader ignores): files are the installer's until then.
  if (owner) {
    if (::geteuid() == 0) {
      for (const auto& kind : staged.kinds) {
        PW_TRY(chown_tree(staging_fd, kind, owner->uid, owner->gid));
      }
    } else {
      log::info("install.owner {}:{} not applied: not running as root (the files stay owned by uid {})", owner->uid,
                owner->gid, ::geteuid());
    }
  }
  if (sync == SyncMethod::each_file) {
    PW_TRY(fsync_tree(staging_fd));
  } else if (::syncfs(staging_fd) != 0) {
    return fail(tree_io_error("cannot sync the filesystem of", staging.string(), errno));
  }
  return staged;
}

} // namespace prewarm::install
