// SPDX-License-Identifier: Apache-2.0
// Directory trees walked through directory fds, never following a symlink:
// what the bundle extraction and the installer do to a staged or live cache
// tree (open a directory beneath a root, list, visit every file, count,
// chown, fsync). Paths given here are relative to a directory fd and only
// name what is reported in messages; nothing is resolved by path.
// Errors are Errc::failed with code E_IO, except a symlink or non-directory
// where a directory is expected (E_TARGET_UNSAFE, Errc::verify).
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"

#include <cstdint>
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

// The names in a directory, without "." and "..", sorted. `where` names it
// in messages.
Result<std::vector<std::string>> list_directory(int dirfd, std::string_view where);

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
