// SPDX-License-Identifier: Apache-2.0
// The regular files of a cache directory, as paths relative to it. Taken
// before an application runs (or recorded at install time), it is what
// "already there" means; everything found afterwards that is not in it was
// written anew.
//
// Inventory file (VERSION/.files, ROOT/.prewarm/files before versions;
// written by the installer):
//   "prewarm-files 3" LF
//   (KIND " " SIZE " " MTIME-NS " " INODE " " SHA256 " " RELATIVE-PATH LF)*
//       sorted; KIND holds no space, a path may (the bundle grammar's
//       printable UTF-8 components joined by "/", raw, not encoded), never a
//       newline; SIZE, MTIME-NS and INODE decimal (INODE 0: not known),
//       SHA256 64 lowercase hex or "-" (not known). The state each file had
//       when installed, so an audit since install tells a rebuilt entry
//       (unlinked and created again, or rewritten in place, even with the
//       same bytes) from an untouched one.
//   "prewarm-files 2" LF  (before inodes were recorded; still read)
//   (KIND " " SIZE " " MTIME-NS " " SHA256 " " RELATIVE-PATH LF)*
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
// O_RDWR and only read it). Reused means the same file the run began with:
// one unlinked and created again (another inode) or truncated and rewritten
// (another mtime) is a rebuilt entry, whatever its bytes.
struct FileState
{
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string sha256;      // hex; empty: not hashed (then size, mtime and inode decide)
  std::uint64_t inode = 0; // 0: not known (lists of format 2)
  bool operator==(const FileState&) const = default;
};
using FileStates = std::map<std::string, FileState, std::less<>>; // relative path -> state

// The state of every regular file under `dir` (as list_files() finds them);
// files of at most `hash_up_to` bytes are also hashed (0: none;
// UINT64_MAX: all).
Result<FileStates> snapshot_files(const std::filesystem::path& dir, std::uint64_t hash_up_to);

// The state of one file, hashed whatever its size.
Result<FileState> snapshot_one(const std::filesystem::path& dir, const std::string& relative);

// Whether `dir`/`relative` is not the file `before` describes: another
// size, mtime or inode (where known), or, without `settled` (a state taken
// at a run's start, when a rewrite may fall in the same mtime tick), another
// digest where `before` has one. With `settled` (a state recorded at
// install) a stat decides, but for another inode alone: then the digest
// (a copied root keeps bytes and mtimes, not inodes). A file that cannot be
// read counts as changed.
bool file_changed(const std::filesystem::path& dir,
                  const std::string& relative,
                  const FileState& before,
                  bool settled = false);

// kind name -> its files.
using Inventory = std::map<std::string, FileSet, std::less<>>;

// kind name -> the install-time state of its files (format 2).
using InventoryStates = std::map<std::string, FileStates, std::less<>>;

// Format 3 when `states` is given (a file without a state is written with
// size 0, mtime 0 and no digest, so an audit counts it as changed rather
// than silently as unchanged), else format 1.
std::string serialize(const Inventory& inventory, const InventoryStates* states = nullptr);
// Any format; `states` (when given) receives format 2's or 3's states and stays
// empty for format 1.
Result<Inventory> parse_inventory(std::string_view text, InventoryStates* states = nullptr);

} // namespace prewarm::audit
