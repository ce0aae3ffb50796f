// SPDX-License-Identifier: Apache-2.0
// Directory trees walked through directory fds, never following a symlink:
// what the bundle extraction and the installer do to a staged or live cache
// tree, and what the builder does to a job's staged output (open a directory
// beneath a root, list, visit every entry, count, chown, fsync). Paths given
// here are relative to a directory fd and only name what is reported in
// messages; nothing is resolved by path (for_each_entry(path) opens its root
// by path, once).
// Errors are Errc::failed with code E_IO, except a symlink or non-directory
// where a directory is expected (E_TARGET_UNSAFE, Errc::verify).
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

namespace prewarm {

// "parent/name", or "name" when `parent` is "" (a path relative to a root fd).
std::string join_relative(std::string_view parent, std::string_view name);

// Errc::failed E_IO: "<what> '<path>': <strerror>".
Error tree_io_error(std::string_view what, std::string_view path, int error_number);

// "a/b/c" -> "a/b" ("" for a top-level name) and "c".
std::string_view parent_of(std::string_view relative);
std::string_view leaf_of(std::string_view relative);

// Opens a directory below `base_fd`, one component at a time with
// O_DIRECTORY|O_NOFOLLOW. "" opens `base_fd` itself again.
Result<UniqueFd> open_directory_beneath(int base_fd, std::string_view relative);

// Opens the directory at `root` by path, once (O_DIRECTORY|O_NOFOLLOW): a
// symlink or non-directory is E_TARGET_UNSAFE, anything else E_IO.
Result<UniqueFd> open_root_directory(const std::filesystem::path& root);

// The names in a directory, without "." and "..", sorted. `where` names it
// in messages.
Result<std::vector<std::string>> list_directory(int dirfd, std::string_view where);

// One entry met by for_each_entry(), valid for the duration of the call.
// `stat` is the entry's own (lstat): a symbolic link is reported as a link,
// whatever it points at, and is never followed.
struct TreeEntry
{
  int parent_fd = -1;        // the directory that holds it
  std::string_view name;     // its name in that directory
  std::string_view relative; // its path below the walk's root ("a/b/name")
  const struct stat& stat;

  bool is_directory() const { return S_ISDIR(stat.st_mode); }
  bool is_regular_file() const { return S_ISREG(stat.st_mode); }
  bool is_symlink() const { return S_ISLNK(stat.st_mode); }
};

// What the walk does after a visit. `skip` on a directory leaves its
// contents unvisited (on anything else it is `descend`); `stop` ends the walk
// with success.
enum class WalkNext { descend, skip, stop };
using EntryVisitor = std::function<Result<WalkNext>(const TreeEntry& entry)>;

// The one tree walk: calls `visit` for every entry under `dirfd`, parents
// before their contents, names in sorted order within a directory, and
// descends into a directory through an fd opened with O_NOFOLLOW (never
// through a symlink). `relative` names `dirfd` in messages and prefixes each
// entry's `relative`. A visitor's error ends the walk with that error.
//
// Walk with it rather than by hand, except where its two promises do not fit,
// and say so beside the walk:
//   - it visits a directory before its contents, so whatever must finish the
//     contents first walks by itself: removing a tree (registry_fetch.cpp
//     remove_leftover) and fsync_tree (children before their parents);
//   - an entry that vanishes between the listing and its lstat is an error,
//     right for a tree this process owns, wrong for one an application
//     changes while it is walked (audit/access_watch.cpp: inotify watches a
//     running application's cache, by path, and loses nothing to a race).
Status for_each_entry(int dirfd, std::string_view relative, const EntryVisitor& visit);

// for_each_entry() under the directory at `root`, which must be a directory
// and not a symlink (E_TARGET_UNSAFE). Entries' `relative` start below
// `root`; messages name `root`.
Status for_each_entry(const std::filesystem::path& root, const EntryVisitor& visit);

// Calls `visit(parent_fd, name, stat)` for every entry under `dirfd` that is
// not a directory, descending into directories (never through a symlink).
// `relative` names `dirfd` in messages.
using FileVisitor = std::function<Status(int parent_fd, const std::string& name, const struct stat& st)>;
Status walk_files(int dirfd, const std::string& relative, const FileVisitor& visit);

struct TreeCounts
{
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
};

// Regular files and their total size under `dirfd`/`relative` (not following
// symlinks). A missing directory counts as empty.
Result<TreeCounts> count_tree(int dirfd, std::string_view relative);

// Gives `base_fd`/`relative` and everything beneath it (not following
// symlinks) to uid:gid.
Status chown_tree(int base_fd, std::string_view relative, std::uint32_t uid, std::uint32_t gid);

// fsyncs every regular file and directory under `dirfd` (not following
// symlinks), children before parents, then `dirfd` itself.
Status fsync_tree(int dirfd);

} // namespace prewarm
