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
// Why each rule: shared/research/kernel-caches.md §2 (NEO), §4 (SYCL),
// §5 (CUDA), §6 (PoCL), §7 (Triton), §8 (Inductor).
#pragma once

#include "base/error.hpp"
#include "bundle/cache_kind.hpp"
#include "command/custom_capture.hpp"
#include "command/subprocess.hpp"

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

struct CaptureOptions
{
  HomeMode home = HomeMode::private_home;
  KindSelection selection = KindSelection::all_known;
  std::vector<CustomCacheRequest> custom_caches; // custom_capture.hpp
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

  std::uint64_t total_files() const;
  std::uint64_t total_bytes() const;
  const KindCapture* find(CacheKind kind) const;
};

// The default location of a kind relative to HOME ("", if it has none there).
std::filesystem::path default_location_under_home(CacheKind kind);

// Bookkeeping a driver keeps beside its entries that must not be packaged:
// NEO config.file / stats / mkstemp temporaries, SYCL *.lock and
// cache_size.txt, PoCL tempfile_* / _UNCACHED_*, Triton tmp.* staging
// directories, Inductor lock files. `name` is one path component.
bool is_bookkeeping(CacheKind kind, std::string_view name);

struct CleanResult
{
  std::uint64_t bookkeeping_removed = 0;
  std::vector<std::string> warnings;
};

// Makes a staged kind directory packageable: removes bookkeeping and
// anything that is neither a regular file nor a directory (the bundle writer
// refuses links and special files, and a slice must never carry a link the
// installer would have to trust); warns about names the writer will refuse.
Result<CleanResult> clean_staged_kind(CacheKind kind, const std::filesystem::path& root);

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
