// SPDX-License-Identifier: Apache-2.0
#include "command/custom_capture.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/app_hint.hpp"
#include "bundle/custom_cache.hpp"
#include "bundle/runtime_variable.hpp"
#include "jobs/staged_kind.hpp"
#include "jobs/staged_output.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace prewarm::command {

namespace fs = std::filesystem;

fs::path
custom_staging_dir(const fs::path& staging_root, std::string_view name)
{
  return staging_root / std::string(bundle::k_custom_kind) / std::string(name);
}

Status
prepare_custom_staging(const fs::path& staging_root, const std::vector<CustomCacheRequest>& caches)
{
  for (const auto& cache : caches) {
    const auto dir = custom_staging_dir(staging_root, cache.name);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      return fail(Errc::failed, fmt::format("cannot create staging directory {}: {}", in_quotes(dir.string()),
                                            ec.message()));
    }
  }
  return {};
}

void
point_custom_variables(Environment& env, const fs::path& staging_root, const std::vector<CustomCacheRequest>& caches)
{
  for (const auto& cache : caches) {
    env[cache.variable] = custom_staging_dir(staging_root, cache.name).string();
  }
}

namespace {

// Keeps DIR/subdir only: every path that is neither on the way to it nor
// below it is removed.
Result<std::uint64_t>
keep_only_subdir(const fs::path& dir, const fs::path& subdir)
{
  std::uint64_t removed = 0;
  fs::path keep = dir;
  for (const auto& component : subdir) {
    std::error_code ec;
    std::vector<fs::path> doomed;
    for (fs::directory_iterator it(keep, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (it->path().filename() != component) {
        doomed.push_back(it->path());
      }
    }
    for (const auto& path : doomed) {
      PW_TRY(remove_tree(path));
      ++removed;
    }
    keep /= component;
    if (!fs::is_directory(fs::symlink_status(keep, ec))) {
      break;
    }
  }
  return removed;
}

} // namespace

Result<std::vector<CustomCapture>>
collect_custom_caches(const fs::path& staging_root, const std::vector<CustomCacheRequest>& caches,
                      std::vector<std::string>& warnings, std::vector<std::string>& refusals)
{
  std::vector<CustomCapture> out;
  for (const auto& cache : caches) {
    CustomCapture capture{cache.name, cache.variable, 0, 0, 0};
    const auto dir = custom_staging_dir(staging_root, cache.name);
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(dir, ec))) {
      return fail(Errc::failed, fmt::format("staging directory {} is gone (did the program delete it?)",
                                            in_quotes(dir.string())));
    }
    if (!cache.subdir.empty()) {
      PW_ASSIGN(capture.outside_subdir_removed, keep_only_subdir(dir, cache.subdir));
    }
    PW_ASSIGN(auto cleaned, jobs::clean_staged_tree(fmt::format("{}/{}", bundle::k_custom_kind, cache.name), dir, nullptr));
    warnings.insert(warnings.end(), cleaned.warnings.begin(), cleaned.warnings.end());
    refusals.insert(refusals.end(), cleaned.refusals.begin(), cleaned.refusals.end());
    PW_ASSIGN(const auto counts, jobs::count_staged_files(dir));
    capture.files = counts.files;
    capture.bytes = counts.bytes;
    if (capture.files == 0) {
      warnings.push_back(fmt::format("custom cache {}: the command wrote nothing under ${}{}", cache.name,
                                     cache.variable, cache.subdir.empty() ? "" : "/" + cache.subdir.string()));
    }
    out.push_back(std::move(capture));
  }
  return out;
}

bool
custom_caches_need_opencl_device(const std::vector<CustomCacheRequest>& caches)
{
  return std::any_of(caches.begin(), caches.end(), [](const CustomCacheRequest& c) {
    return bundle::custom_cache_device(c.variable, c.subdir.string()) == bundle::CacheDevice::opencl_device;
  });
}

std::vector<bundle::Requirement>
custom_cache_requirements(const std::vector<CustomCacheRequest>& caches,
                          const std::vector<DeviceProperties>& opencl_devices, std::vector<std::string>& warnings)
{
  if (!custom_caches_need_opencl_device(caches)) {
    return {};
  }
  if (opencl_devices.size() != 1) {
    warnings.push_back(fmt::format("custom caches: {} OpenCL devices known for this job (one expected); their slice "
                                   "carries no device requirement",
                                   opencl_devices.size()));
    return {};
  }
  std::vector<bundle::Requirement> requirements;
  for (const auto key : {prop::vendor, prop::opencl_platform_version, prop::opencl_device,
                         prop::opencl_device_version, prop::opencl_driver}) {
    // A value the manifest cannot spell (PoCL 3.1's platform version holds a
    // double space) is left out, as for PoCL slices (identity.cpp); the other
    // keys still pin device and driver.
    if (const auto it = opencl_devices.front().find(key);
        it != opencl_devices.front().end() && bundle::is_variable_value(it->second)) {
      requirements.push_back({std::string(key), "==", it->second});
    }
  }
  std::sort(requirements.begin(), requirements.end());
  return requirements;
}

} // namespace prewarm::command
