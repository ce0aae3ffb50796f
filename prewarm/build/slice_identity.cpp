// SPDX-License-Identifier: Apache-2.0
#include "build/slice_identity.hpp"

#include "base/digest.hpp"
#include "base/log.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::build {

bool
representable_value(std::string_view value)
{
  if (value.empty() || value.size() > 1024 || value.front() == ' ' || value.back() == ' ' ||
      value.find("  ") != std::string_view::npos) {
    return false;
  }
  return std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

std::vector<bundle::Requirement>
run_requirements(const manifest::Target& target, const DeviceProperties& device)
{
  std::vector<std::string_view> keys{prop::vendor};
  switch (target.vendor) {
  case manifest::Vendor::cpu:
    // PoCL's cache key covers the kernel and the build options, not the
    // device or the LLVM it came from: pin both so a different CPU or PoCL
    // build never loads these binaries.
    keys.insert(keys.end(), {prop::opencl_platform_version, prop::opencl_device, prop::opencl_device_version,
                             prop::opencl_driver});
    break;
  case manifest::Vendor::nvidia:
    // CUDA's ComputeCache is valid only for the same driver (kernel-caches.md §5).
    keys.insert(keys.end(), {prop::nvidia_driver, prop::nvidia_sm, prop::opencl_device, prop::opencl_driver});
    break;
  case manifest::Vendor::intel:
    keys.insert(keys.end(), {prop::pci_id, prop::opencl_device, prop::opencl_driver});
    break;
  }
  std::vector<bundle::Requirement> requirements;
  for (auto key : keys) {
    const auto it = device.find(key);
    if (it == device.end() || it->second.empty()) {
      continue;
    }
    if (!representable_value(it->second)) {
      // PoCL 3.1's CL_PLATFORM_VERSION holds a double space ("3.1+debian  Linux,
      // ..."); the bundle grammar has one spelling per value and refuses it.
      // Normalising here would never match the host's exact value, so the key
      // is left out; opencl.driver and opencl.device-version still pin PoCL.
      log::verbose("slice requirement {} left out: its value \"{}\" cannot be written in a bundle", key,
                   it->second);
      continue;
    }
    requirements.push_back(bundle::Requirement{std::string(key), "==", it->second});
  }
  std::sort(requirements.begin(), requirements.end());
  return requirements;
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

} // namespace prewarm::build
