// SPDX-License-Identifier: Apache-2.0
// Never worse than no bundle for another user: how an application that runs
// as another user than the installer gets every installed cache.
//
// The installer writes directories 0755 and files 0644 (slice modes), owned
// by whoever installed them, so every user can read every cache. Reading is
// not enough: PoCL writes lazily generated per-local-size code into its cache
// directory on the first launch of a kernel, and Triton, Inductor, CUDA, NEO,
// SYCL and custom caches write whatever a run adds; a cache directory they
// cannot write turns into a failed build ("failed to build the program") or
// an exception, which is worse than no cache at all.
//
// Mechanisms, in the order an operator should reach for them:
//   1. `install --owner UID:GID` (or the trust policy's install.owner): a root
//      installer gives the tree to the application's user. No copy, no cost;
//      the right choice when the image knows its user.
//   2. Otherwise `env`/`exec` check each installed kind for the current
//      (effective) user. Readable and writable: used in place. Readable but
//      not writable, for a kind the application writes: a private writable
//      copy, made once per user and installed version under
//      $TMPDIR/prewarm-<uid>/<version>/<kind> (mode 0700, checked to be the
//      user's own and not a link), reused by every later exec of that user.
//      Copied are only the files the signed manifest lists for the installed
//      slices, each checked against its size and SHA-256 while it is copied:
//      what the installed tree holds beyond that (written by an application,
//      e.g. of the `install --owner` user) or in its place never reaches
//      another user. The base ($TMPDIR, else /tmp) is used only when every
//      directory from / down to it is owned by root or this user and is
//      writable by nobody else unless it is sticky (OpenSSH's rule for its
//      files, with sticky directories such as /tmp allowed): under a base
//      others may rename in, the copy could be swapped under a running
//      application. A copy for another version is removed only when no
//      process holds it: exec holds its copy's version directory (a shared
//      flock, installed_version.hpp) for the application's life. Measured: hashcat's
//      3 kernels (11 MiB) in 0.038 s (bench/runtime_needs/hashcat.md); larger
//      trees: bench/install/user_copy_bench.sh. A copy that fails, or a cache the user
//      cannot even read: that kind's variables stay unset and a warning says
//      why, so the application compiles as it would without prewarm.
// Rejected: group- or world-writable cache directories. A cache entry is
// code the next process loads and runs; a directory every user may write lets
// one user plant kernels in another user's application. A private copy keeps
// each user's writes to that user.
//
// prewarm's own program store ("programs") is only read at run time (the
// runtime library serves binaries and never writes the installed store), so
// readable is enough for it.
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"
#include "bundle/bundle_manifest.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace prewarm::install {

// Whether an application writes into an installed cache of `kind` ("pocl",
// "custom", ...) at run time.
bool kind_is_written(std::string_view kind);

enum class CacheUse {
  in_place,     // ROOT/<kind> itself
  private_copy, // the current user's writable copy
};

struct UsableCache
{
  std::filesystem::path dir;
  CacheUse use = CacheUse::in_place;
  bool copied_now = false;         // this call made the copy
  std::uint64_t files_copied = 0;  // when copied_now
  std::uint64_t files_refused = 0; // when copied_now: listed, but not as signed (size, digest, type)
  double copy_seconds = 0;         // when copied_now
  UniqueFd hold;                   // private copy: its version directory, shared-locked
  std::string refusal;             // the first file refused, why
};

// The files and directories the signed manifest lists for the installed
// slices ("pocl/ab/x.so" -> entry).
struct SignedFileList
{
  std::map<std::string, bundle::FileEntry> files;
  std::vector<std::string> directories;
  std::vector<bundle::LinkEntry> links; // made again from the signed target, never read from disk
};

// What usable_cache() reads from: the installed version.
struct InstalledCaches
{
  std::filesystem::path dir; // the version directory (ROOT for a legacy root)
  std::string version;       // names the private copy (install_layout.hpp id)
  // Asked only when a copy is made; null or an error: no copy.
  std::function<Result<const SignedFileList*>()> signed_files;
};

struct UserAccessOptions
{
  // Where private copies go; empty: $TMPDIR if absolute, else /tmp.
  std::filesystem::path private_base;
};

// The directory the current user's application should use for the installed
// cache VERSION/`relative` ("pocl", "custom/hashcat"). `relative` is opened one
// component at a time without following links, so a link planted in the
// root cannot point the application outside it. Errc::failed with code
// E_CACHE_UNUSABLE (reason in the message) when the user can use neither the
// installed directory nor a private copy.
Result<UsableCache> usable_cache(const InstalledCaches& installed,
                                 std::string_view relative,
                                 const UserAccessOptions& options = {});

// The base rule above: Errc::failed E_CACHE_UNUSABLE naming the first
// directory that breaks it and why.
Status check_private_base(const std::filesystem::path& base);

} // namespace prewarm::install
