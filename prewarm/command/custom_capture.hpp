// SPDX-License-Identifier: Apache-2.0
// Capturing custom caches (runtime/bundle/custom_cache.hpp): directories a
// program finds through a variable that no built-in kind knows, such as
// hashcat's $XDG_CACHE_HOME/hashcat/kernels. Each gets a fresh staging
// directory WORK/staging/custom/<name>, the variable points there for the
// warm-up (over HOME/XDG_CACHE_HOME of the private home), and afterwards only
// `subdir` is kept when the model names one, links and special files are
// removed, and the tree is measured.
//
// Identity: a custom cache's format is unknown to prewarm, so its slice
// requires what its application's row (bundle/app_hint.hpp) says the cache
// depends on, else the device the job ran on:
//   - on a GPU target: the job's OpenCL device (vendor, platform, device,
//     device version, driver: the keys of a PoCL slice);
//   - on the `cpu` target: the CPU itself, never PoCL, which an application
//     keeping its own cache never opened: cpu.arch ==, cpu.isa-level >= (the
//     cache holds machine code: unknown ones are assumed to), the versions
//     of the row's frameworks (an unknown cache: every framework version the
//     build read), os.kernel-release == where the application keys on it;
//   - a row whose cache holds what the OpenCL driver built (hashcat, clFFT):
//     the job's OpenCL device, PoCL's on the `cpu` target;
//   - a row whose cache holds nothing device-specific (Numba): nothing.
// A program that keys its own cache by device (hashcat does) simply misses
// on another one, but a program that does not would load code built for
// another device. A fact the build host lacks is a warning.
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "command/identity.hpp"
#include "command/subprocess.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::command {

struct CustomCacheRequest
{
  std::string name;
  std::string variable;
  std::filesystem::path subdir;               // empty: the whole directory
  std::optional<bundle::CacheFlag> flag = {}; // the directory is KEY=DIR among the variable's flags
};

struct CustomCapture
{
  std::string name;
  std::string variable;
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  std::uint64_t outside_subdir_removed = 0; // top-level entries dropped for `subdir`
};

// WORK/staging/custom/<name>.
std::filesystem::path custom_staging_dir(const std::filesystem::path& staging_root, std::string_view name);

// Creates every custom staging directory.
Status prepare_custom_staging(const std::filesystem::path& staging_root, const std::vector<CustomCacheRequest>& caches);

// Points each variable at its staging directory: the variable's value, or
// for a cache with a flag, KEY=DIR merged into the value `env` already has
// (bundle::merge_cache_flag(): the application's own KEY=... replaced). What
// could not be merged is returned, one line each, and the variable is left.
std::vector<std::string> point_custom_variables(Environment& env, const std::filesystem::path& staging_root,
                                                const std::vector<CustomCacheRequest>& caches);

// What `env` (the warm-up's environment before the caches are pointed)
// sets that a cache's flag replaces, one warning each.
std::vector<std::string> replaced_cache_flags(const Environment& env, const std::vector<CustomCacheRequest>& caches);

// After the run: subdir kept, cleaned as jobs::clean_staged_tree() says
// (links that leave the cache and special files removed with a warning;
// links inside it and names the bundle cannot carry added to `refusals`),
// measured. A cache that stayed empty is a warning.
Result<std::vector<CustomCapture>> collect_custom_caches(const std::filesystem::path& staging_root,
                                                         const std::vector<CustomCacheRequest>& caches,
                                                         std::vector<std::string>& warnings,
                                                         std::vector<std::string>& refusals);

// Whether any of `caches` depends on the job's device (all but those an
// application row says do not: Numba's, tinygrad's, Taichi's), so a slice
// requires what its cache depends on, no more.
bool custom_caches_need_opencl_device(const std::vector<CustomCacheRequest>& caches);

// The requirements of the filled custom caches `caches` (see the header),
// from the job's OpenCL devices, the build host's CPU and the framework
// versions in `facts`, with a warning for each fact that is missing.
std::vector<bundle::Requirement> custom_cache_requirements(const std::vector<CustomCacheRequest>& caches,
                                                           const IdentityFacts& facts,
                                                           std::vector<std::string>& warnings);

} // namespace prewarm::command
