// SPDX-License-Identifier: Apache-2.0
// The regular files of a cache directory, as paths relative to it. Taken
// before an application runs (or recorded at install time), it is what
// "already there" means; everything found afterwards that is not in it was
// written anew.
//
// Inventory file (ROOT/.prewarm/files, written by the installer):
//   "prewarm-files 1" LF
//   (KIND " " RELATIVE-PATH LF)*    sorted; KIND holds no space, a path may
//                                   (the bundle grammar's printable UTF-8
//                                   components joined by "/"), never a newline
#pragma once

#include "base/error.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace prewarm::audit {

using FileSet = std::set<std::string>; // relative paths, "/"-separated

// Every regular file under `dir` (links and special files are not followed
// or listed: a read through a cache's own link opens, and counts as a read
// of, its target). A missing directory is an empty set.
Result<FileSet> list_files(const std::filesystem::path& dir);

// What a file was before a run: a file that was written during the run
// counts as new only when this changed (an application may open a cache file
// O_RDWR and only read it, or rewrite it with the same bytes).
struct FileState
{
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string sha256; // hex; empty: not hashed (then size and mtime decide)
  bool operator==(const FileState&) const = default;
};
using FileStates = std::map<std::string, FileState, std::less<>>; // relative path -> state

// The state of every regular file under `dir` (as list_files() finds them);
// files of at most `hash_up_to` bytes are also hashed (0: none;
// UINT64_MAX: all).
Result<FileStates> snapshot_files(const std::filesystem::path& dir, std::uint64_t hash_up_to);

// Whether `dir`/`relative` differs from `before`: another size, another
// digest when `before` has one, else another mtime. A file that cannot be
// read counts as changed.
bool file_changed(const std::filesystem::path& dir, const std::string& relative, const FileState& before);

// kind name -> its files.
using Inventory = std::map<std::string, FileSet, std::less<>>;

std::string serialize(const Inventory& inventory);
Result<Inventory> parse_inventory(std::string_view text);

} // namespace prewarm::audit
