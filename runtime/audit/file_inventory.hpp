// SPDX-License-Identifier: Apache-2.0
// The regular files of a cache directory, as paths relative to it. Taken
// before an application runs (or recorded at install time), it is what
// "already there" means; everything found afterwards that is not in it was
// written anew.
//
// Inventory file (VERSION/.files, ROOT/.prewarm/files before versions;
// written by the installer):
//   "prewarm-files 2" LF
//   (KIND " " SIZE " " MTIME-NS " " SHA256 " " RELATIVE-PATH LF)*
//       sorted; KIND holds no space, a path may (the bundle grammar's
//       printable UTF-8 components joined by "/", raw, not encoded), never a
//       newline; SIZE and MTIME-NS decimal, SHA256 64 lowercase hex or "-"
//       (not known). The state each file had when installed, so an audit
//       since install tells a file rewritten with other bytes (a recompiled
//       entry under the same name) from an untouched one.
//   "prewarm-files 1" LF  (installs before states were recorded; still read)
//   (KIND " " RELATIVE-PATH LF)*    no states: a rewrite is not seen
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

// The state of one file, hashed whatever its size.
Result<FileState> snapshot_one(const std::filesystem::path& dir, const std::string& relative);

// Whether `dir`/`relative` differs from `before`: another size, another
// digest when `before` has one, else another mtime. A file that cannot be
// read counts as changed.
// With `settled` (a state recorded long before, at install), the same size
// and mtime mean unchanged without hashing; a file whose mtime moved is
// hashed when `before` has a digest. Without it (a state taken at a run's
// start, when a rewrite may fall in the same mtime tick) a digest is always
// compared.
bool file_changed(const std::filesystem::path& dir,
                  const std::string& relative,
                  const FileState& before,
                  bool settled = false);

// kind name -> its files.
using Inventory = std::map<std::string, FileSet, std::less<>>;

// kind name -> the install-time state of its files (format 2).
using InventoryStates = std::map<std::string, FileStates, std::less<>>;

// Format 2 when `states` is given (a file without a state is written with
// size 0, mtime 0 and no digest, so an audit counts it as changed rather
// than silently as unchanged), else format 1.
std::string serialize(const Inventory& inventory, const InventoryStates* states = nullptr);
// Either format; `states` (when given) receives format 2's states and stays
// empty for format 1.
Result<Inventory> parse_inventory(std::string_view text, InventoryStates* states = nullptr);

} // namespace prewarm::audit
