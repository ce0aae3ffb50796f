// SPDX-License-Identifier: Apache-2.0
// `prewarm intel-profile`: the key profile (manifest/intel_profile.hpp) of the
// Intel GPU this machine has, measured once by a user with the card, from the
// real driver (docs/guide/intel.md):
//   - the clinfo-level queries: PCI id, CL_DEVICE_IP_VERSION_INTEL, the
//     extension list, device name, driver version (prewarm-cl-replay's device
//     line), the Level Zero device name (prewarm-ze-probe-build's);
//   - from sysfs (host/pci_probe.hpp): the PCI revision and the kernel driver
//     (i915 or xe) of the PCI device with that id;
//   - the versions dpkg lists for libigc2, intel-opencl-icd and
//     libze-intel-gpu1 (NEO hashes libigc's size and mtime: a warning when the
//     libigc.so.2 this machine's loader finds is not the one NEO hashed);
//   - NEO's BinaryCacheTrace of one tiny OpenCL build and one tiny Level Zero
//     build (NEOReadDebugKeys=1 BinaryCacheTrace=1 NEO_CACHE_DIR=<temporary>):
//     every input of NEO's key as the card computes it (internal options with
//     the extension list and bindless mode, the platform struct, the feature
//     and workaround words, the IGC revision, size and mtime). The IP version
//     is checked against NEO itself: the entry's name recomputed with it
//     (neo_cache_key.hpp) must be the name NEO wrote.
// Each value's source says "measured on <device> by prewarm intel-profile";
// where NEO's debug keys in the environment made the device a virtual one
// (SetCommandStreamReceiver, ProductFamilyOverride, ForceDeviceId), the
// source says so and names them. What could not be measured is listed under
// `unknown` with the reason. Extensions a virtual device cannot list
// (cl_khr_pci_bus_info, cl_intel_va_api_media_sharing) are the profile's
// `add`; the whole list is `measured`.
//
// The driver is the system's (the ICD loader's and Level Zero loader's
// choice), or with `driver_root` an Intel root's (virtual_device/intel_root.hpp:
// the tests measure the virtual device through it).
#pragma once

#include "base/error.hpp"
#include "manifest/intel_profile.hpp"
#include "manifest/target_registry.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace prewarm::virtual_device {

struct ProfileRequest
{
  std::string target; // the registry's target; empty: the one listing the measured PCI id
  std::optional<std::filesystem::path> driver_root; // an Intel root instead of the system's driver
  std::filesystem::path sys_root = "/sys";
  std::chrono::seconds timeout{120}; // per build
};

Result<manifest::IntelProfile> measure_intel_profile(const ProfileRequest& request,
                                                     const manifest::TargetRegistry& registry);

// The document manifest::parse_intel_profile() reads back equal, after a
// comment `header` (each line gets "# ").
std::string format_intel_profile(const manifest::IntelProfile& profile, std::string_view header);

} // namespace prewarm::virtual_device
