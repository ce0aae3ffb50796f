// SPDX-License-Identifier: Apache-2.0
// Capturing the kernel caches a program fills. Before the run, every
// selected cache kind gets a fresh, existing staging directory (drivers do
// not create them: NEO silently disables its cache for a missing
// NEO_CACHE_DIR) and the program's environment points each cache variable
// there. HOME and XDG_CACHE_HOME point into a private directory too, so a
// program that ignores or resets a variable still writes into a place this
// capture sees (its default location) instead of the builder's real home.
// After the run, default locations are folded into staging, driver
// bookkeeping that must not ship is removed, and each kind is measured.
//
// Layout of the work directory:
//   WORK/staging/<kind>/...   what goes into a slice (bundle writer layout)
//   WORK/staging/custom/<name>/...  custom caches (custom_capture.hpp)
//   WORK/home/                HOME for the program; XDG_CACHE_HOME=WORK/home/.cache
//
// The rules that differ by kind (variables, default locations, bookkeeping)
// are bundle::CacheKindRules (runtime/bundle/cache_kind.hpp); why each rule:
// docs/research/kernel-caches.md §2 (NEO), §4 (SYCL), §5 (CUDA), §6 (PoCL),
// §7 (Triton), §8 (Inductor).
#pragma once

#include "base/error.hpp"
#include "bundle/cache_kind.hpp"
#include "command/custom_capture.hpp"
#include "command/subprocess.hpp"
#include "jobs/staged_kind.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::command {

using bundle::CacheKind;

// private_home: HOME and XDG_CACHE_HOME point into the work directory.
// inherited_home: they stay as they are (for programs that need their real
// home; default-location fallbacks are then not captured).
enum class HomeMode { private_home, inherited_home };

// Whether the kinds were named by the manifest (then each one that comes back
// empty is worth a warning) or are the default "every known kind".
enum class KindSelection { named, all_known };

// Whether a dynamo capture makes the program save Dynamo's precompiled frames
// at exit (precompile_hook.hpp): the capture does, the hit proof (which runs
// as the application will, and must not rewrite what it checks) does not.
enum class DynamoSave { at_exit, never };

struct CaptureOptions
{
  HomeMode home = HomeMode::private_home;
  KindSelection selection = KindSelection::all_known;
  std::vector<CustomCacheRequest> custom_caches; // custom_capture.hpp
  // Where the program's caches go; empty: WORK/staging. Else an existing
  // empty directory: the capture root (capture_root.hpp), laid out as
  // WORK/staging is.
  std::filesystem::path staging_root;
  DynamoSave dynamo_save = DynamoSave::at_exit;
};

struct KindCapture
{
  CacheKind kind = CacheKind::pocl;
  std::uint64_t files = 0;             // regular files in staging after cleaning
  std::uint64_t bytes = 0;             // their total size
  std::uint64_t bookkeeping_removed = 0; // lock, temp and size-accounting entries removed
  std::uint64_t from_default_location = 0; // files moved in from the kind's default location
};

struct CaptureSummary
{
  std::vector<KindCapture> kinds; // every selected kind, in kind order
  std::vector<CustomCapture> custom; // every custom cache, in manifest order
  std::vector<std::string> warnings;
  // What the bundle writer would refuse (jobs::CleanResult::refusals): the
  // job fails with these before its proof runs.
  std::vector<std::string> refusals;

  std::uint64_t total_files() const;
  std::uint64_t total_bytes() const;
  const KindCapture* find(CacheKind kind) const;
};

// Capture hygiene shared with the other executors (jobs/staged_kind.hpp).
using jobs::CleanResult;
using jobs::clean_staged_kind;

// Settings in the program's environment (before redirection) that make a
// selected cache miss, stay empty or be unusable, one readable line each.
// Variables that the redirection overrides are reported as overridden.
std::vector<std::string> environment_traps(const Environment& environment,
                                           std::span<const CacheKind> kinds);

class CacheCapture
{
public:
  // Creates WORK/staging/<kind> for every kind and WORK/home (WORK must exist).
  static Result<CacheCapture> prepare(const std::filesystem::path& work_dir,
                                      std::vector<CacheKind> kinds,
                                      CaptureOptions options = {});

  const std::vector<CacheKind>& kinds() const { return m_kinds; }
  const std::filesystem::path& staging_root() const { return m_staging_root; }
  std::filesystem::path staging_dir(CacheKind kind) const;
  const std::filesystem::path& private_home() const { return m_home; }

  // `base` (this process's environment plus the manifest's) with every cache
  // variable of the selected kinds pointed at staging, and HOME/XDG_CACHE_HOME
  // at the private home. Locations that hold data rather than compiled
  // kernels (Python user site, pyenv, model downloads) keep their real paths,
  // so moving HOME does not break the program or re-download models.
  Environment child_environment(const Environment& base) const;

  // After the program ended: default locations folded into staging,
  // bookkeeping and non-regular files removed, kinds measured, warnings for
  // an empty capture.
  Result<CaptureSummary> collect() const;

  // Moves every kind's and custom cache's directory from the staging root
  // (the capture root) to `to`, which becomes the staging root: after the
  // run, before collect().
  Status move_staging(const std::filesystem::path& to);

private:
  CacheCapture(std::filesystem::path staging_root, std::filesystem::path home,
               std::vector<CacheKind> kinds, CaptureOptions options)
    : m_staging_root(std::move(staging_root)), m_home(std::move(home)), m_kinds(std::move(kinds)),
      m_options(options)
  {
  }

  std::filesystem::path m_staging_root;
  std::filesystem::path m_home;
  std::vector<CacheKind> m_kinds;
  CaptureOptions m_options;
};

} // namespace prewarm::command
