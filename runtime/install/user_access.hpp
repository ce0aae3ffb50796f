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
//      copy, made once per user and bundle under $TMPDIR/prewarm-<uid>/
//      <manifest digest>/<kind> (mode 0700, checked to be the user's own and
//      not a link), reused by every later exec of that user; a copy for an
//      older bundle is removed when the new one is made. Measured: hashcat's
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

#include <cstdint>
#include <filesystem>
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
  double copy_seconds = 0;         // when copied_now
};

struct UserAccessOptions
{
  // Where private copies go; empty: $TMPDIR if absolute, else /tmp.
  std::filesystem::path private_base;
};

// The directory the current user's application should use for the installed
// cache ROOT/`relative` ("pocl", "custom/hashcat"). `relative` is opened one
// component at a time without following links, so a link planted in the
// root cannot point the application outside it. Errc::failed with code
// E_CACHE_UNUSABLE (reason in the message) when the user can use neither the
// installed directory nor a private copy.
Result<UsableCache> usable_cache(const std::filesystem::path& root,
                                 std::string_view relative,
                                 std::string_view manifest_sha256,
                                 const UserAccessOptions& options = {});

} // namespace prewarm::install
