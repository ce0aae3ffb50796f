// SPDX-License-Identifier: Apache-2.0
#include "jobs/slice_identity.hpp"

#include "base/digest.hpp"
#include "base/log.hpp"
#include "level_zero/aot_programs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace prewarm::jobs {

bool
representable_value(std::string_view value)
{
  if (value.empty() || value.size() > 1024 || value.front() == ' ' || value.back() == ' ' ||
      value.find("  ") != std::string_view::npos) {
    return false;
  }
  return std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

std::span<const std::string_view>
pocl_requirement_keys()
{
  // PoCL's cache key covers the kernel and the build options, not the device
  // or the LLVM it came from: pin both so a different CPU or PoCL build never
  // loads these binaries.
  static constexpr std::string_view keys[] = {prop::vendor, prop::opencl_platform_version, prop::opencl_device,
                                              prop::opencl_device_version, prop::opencl_driver};
  return keys;
}

void
require_values(std::vector<bundle::Requirement>& out, std::vector<std::string>& warnings,
               std::span<const DeviceProperties* const> devices, std::string_view key, std::string_view what_for)
{
  std::set<std::string> values;
  for (const auto* device : devices) {
    if (const auto it = device->find(key); it != device->end() && !it->second.empty()) {
      if (!representable_value(it->second)) {
        log::verbose("{}: requirement {} left out: \"{}\" cannot be written in a bundle", what_for, key, it->second);
        return;
      }
      values.insert(it->second);
    }
  }
  if (values.empty()) {
    warnings.push_back(fmt::format("{}: the build host reports no {}; the slice does not check it", what_for, key));
    return;
  }
  if (values.size() == 1) {
    out.push_back(bundle::Requirement{std::string(key), "==", *values.begin()});
    return;
  }
  // A value with a comma cannot go into an "in" list unambiguously.
  if (std::any_of(values.begin(), values.end(),
                  [](const std::string& v) { return v.find(',') != std::string::npos; })) {
    warnings.push_back(fmt::format("{}: devices differ in {} and a value holds a comma; the slice "
                                   "does not check it",
                                   what_for, key));
    return;
  }
  out.push_back(bundle::Requirement{std::string(key), "in", fmt::format("{}", fmt::join(values, ","))});
}

std::vector<bundle::Requirement>
run_requirements(const manifest::Target& target, const DeviceProperties& device)
{
  std::vector<std::string_view> keys;
  switch (target.vendor) {
  case manifest::Vendor::cpu: {
    const auto pocl = pocl_requirement_keys();
    keys.assign(pocl.begin(), pocl.end());
    break;
  }
  case manifest::Vendor::nvidia:
    // CUDA's ComputeCache is valid only for the same driver.
    keys = {prop::vendor, prop::nvidia_driver, prop::nvidia_sm, prop::opencl_device, prop::opencl_driver};
    break;
  case manifest::Vendor::intel:
    keys = {prop::vendor, prop::pci_id, prop::opencl_device, prop::opencl_driver};
    break;
  }
  // One device: every requirement is "==". A property it did not report is
  // left out without a word (an absent key would make the requirement
  // unsatisfiable everywhere).
  std::vector<bundle::Requirement> requirements;
  std::vector<std::string> unreported;
  const DeviceProperties* const devices[] = {&device};
  for (const auto key : keys) {
    require_values(requirements, unreported, devices, key, target.name);
  }
  std::sort(requirements.begin(), requirements.end());
  return requirements;
}

bundle::Requirement
intel_driver_requirement(std::string_view release)
{
  const auto spellings = level_zero::release_spellings(release);
  return spellings.size() == 1 ? bundle::Requirement{"intel.driver", "==", spellings.front()}
                               : bundle::Requirement{"intel.driver", "in", fmt::format("{}", fmt::join(spellings, ","))};
}

std::string
canonical_requirements(std::vector<bundle::Requirement> requirements)
{
  std::sort(requirements.begin(), requirements.end());
  std::string text;
  for (const auto& r : requirements) {
    text += fmt::format("{} {} {}\n", r.key, r.op, r.value);
  }
  return text;
}

std::string
slice_id(const std::string& target, const std::vector<bundle::Requirement>& requirements)
{
  return fmt::format("{}-{}", target, sha256_hex(canonical_requirements(requirements)).substr(0, 12));
}

} // namespace prewarm::jobs
