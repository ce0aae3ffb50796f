// SPDX-License-Identifier: Apache-2.0
#include "command/custom_capture.hpp"

#include "base/cpu_properties.hpp"
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
#include <set>

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

std::vector<std::string>
point_custom_variables(Environment& env, const fs::path& staging_root, const std::vector<CustomCacheRequest>& caches)
{
  std::vector<std::string> problems;
  for (const auto& cache : caches) {
    const auto dir = custom_staging_dir(staging_root, cache.name).string();
    if (!cache.flag) {
      env[cache.variable] = dir;
      continue;
    }
    const auto existing = env.find(cache.variable);
    auto merged = bundle::merge_cache_flag(existing == env.end() ? "" : existing->second, *cache.flag, dir);
    if (!merged) {
      problems.push_back(
        fmt::format("custom cache {}: {} left as it was: {}", cache.name, cache.variable, merged.error().message()));
      continue;
    }
    env[cache.variable] = std::move(merged->value);
  }
  return problems;
}

std::vector<std::string>
replaced_cache_flags(const Environment& env, const std::vector<CustomCacheRequest>& caches)
{
  std::vector<std::string> warnings;
  for (const auto& cache : caches) {
    const auto existing = env.find(cache.variable);
    if (!cache.flag || existing == env.end()) {
      continue;
    }
    for (const auto& own : bundle::conflicting_flags(existing->second, *cache.flag)) {
      warnings.push_back(fmt::format("custom cache {}: {} holds {}; the warm-up and the hit proof run with {}={} "
                                     "instead (the cache's flag wins, as at prewarm-runtime exec)",
                                     cache.name, cache.variable, own, cache.flag->key, "<the cache's directory>"));
    }
  }
  return warnings;
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
    return bundle::custom_cache_device(c.variable, c.subdir.string()) != bundle::CacheDevice::none;
  });
}

namespace {

bool
is_cpu_job(const IdentityFacts& facts)
{
  if (facts.opencl_devices.empty()) {
    return true; // no OpenCL device known: the application ran on the CPU
  }
  const auto vendor = facts.opencl_devices.front().find(prop::vendor);
  return vendor != facts.opencl_devices.front().end() && vendor->second == "cpu";
}

void
require_opencl_device(const IdentityFacts& facts, std::vector<bundle::Requirement>& requirements,
                      std::vector<std::string>& warnings)
{
  if (facts.opencl_devices.size() != 1) {
    warnings.push_back(fmt::format("custom caches: {} OpenCL devices known for this job (one expected); their slice "
                                   "carries no device requirement",
                                   facts.opencl_devices.size()));
    return;
  }
  for (const auto key : {prop::vendor, prop::opencl_platform_version, prop::opencl_device,
                         prop::opencl_device_version, prop::opencl_driver}) {
    // A value the manifest cannot spell (PoCL 3.1's platform version holds a
    // double space) is left out, as for PoCL slices (identity.cpp); the other
    // keys still pin device and driver.
    if (const auto it = facts.opencl_devices.front().find(key);
        it != facts.opencl_devices.front().end() && bundle::is_variable_value(it->second)) {
      requirements.push_back({std::string(key), "==", it->second});
    }
  }
}

void
require_cpu_value(const IdentityFacts& facts, std::string_view key, std::string_view op,
                  std::vector<bundle::Requirement>& requirements, std::vector<std::string>& warnings)
{
  if (const auto it = facts.cpu.find(key); it != facts.cpu.end() && bundle::is_variable_value(it->second)) {
    requirements.push_back({std::string(key), std::string(op), it->second});
  } else if (key != prop::cpu_isa_level || facts.cpu.contains(prop::cpu_arch)) {
    // cpu.isa-level exists on x86-64 only: its absence elsewhere is no gap.
    warnings.push_back(fmt::format("custom caches: {} of the build host not known; the slice does not check it", key));
  }
}

// What a cache made on the CPU depends on (app_hint.hpp CacheDevice::job_device).
void
require_cpu(const std::vector<CustomCacheRequest>& caches, const IdentityFacts& facts,
            std::vector<bundle::Requirement>& requirements, std::vector<std::string>& warnings)
{
  bool machine_code = false;
  bool kernel_release = false;
  bool unknown = false;
  std::set<std::string, std::less<>> frameworks;
  for (const auto& cache : caches) {
    const auto* hint = bundle::app_hint_for_cache(cache.variable, cache.subdir.string());
    if (hint != nullptr && hint->device != bundle::CacheDevice::job_device) {
      continue;
    }
    if (hint == nullptr) {
      unknown = true;
      machine_code = true;
      continue;
    }
    machine_code = machine_code || hint->machine_code;
    kernel_release = kernel_release || hint->keys_on_kernel_release;
    for (std::string_view rest = hint->frameworks; !rest.empty();) {
      const auto comma = rest.find(',');
      frameworks.insert(fmt::format("{}{}", prop::framework_prefix, rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  require_cpu_value(facts, prop::cpu_arch, "==", requirements, warnings);
  if (machine_code) {
    require_cpu_value(facts, prop::cpu_isa_level, ">=", requirements, warnings);
  }
  if (kernel_release) {
    require_cpu_value(facts, prop::os_kernel_release, "==", requirements, warnings);
  }
  // An unknown cache: every framework version the build read (not Python's:
  // a cache of machine code does not depend on the interpreter's version).
  if (unknown) {
    for (const auto& [key, version] : facts.frameworks) {
      if (key != "framework.python") {
        frameworks.insert(key);
      }
    }
  }
  for (const auto& key : frameworks) {
    if (const auto it = facts.frameworks.find(key); it != facts.frameworks.end()) {
      requirements.push_back({key, "==", it->second});
    } else {
      warnings.push_back(fmt::format("custom caches: no {} version known (the command is not a Python interpreter, "
                                     "or the package is not installed for it); the slice does not check it",
                                     key.substr(prop::framework_prefix.size())));
    }
  }
}

} // namespace

std::vector<bundle::Requirement>
custom_cache_requirements(const std::vector<CustomCacheRequest>& caches, const IdentityFacts& facts,
                          std::vector<std::string>& warnings)
{
  const auto has = [&](bundle::CacheDevice device) {
    return std::any_of(caches.begin(), caches.end(), [&](const CustomCacheRequest& c) {
      return bundle::custom_cache_device(c.variable, c.subdir.string()) == device;
    });
  };
  const bool on_cpu = is_cpu_job(facts);
  std::vector<bundle::Requirement> requirements;
  if (has(bundle::CacheDevice::opencl_device) || (has(bundle::CacheDevice::job_device) && !on_cpu)) {
    require_opencl_device(facts, requirements, warnings);
  }
  if (has(bundle::CacheDevice::job_device) && on_cpu) {
    require_cpu(caches, facts, requirements, warnings);
  }
  std::sort(requirements.begin(), requirements.end());
  requirements.erase(std::unique(requirements.begin(), requirements.end()), requirements.end());
  return requirements;
}

} // namespace prewarm::command
