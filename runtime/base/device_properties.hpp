// SPDX-License-Identifier: Apache-2.0
// A device as flat key/value properties: what a host probe reports, what a
// builder records for the device that filled a cache, and what slice
// requirements ("require KEY OP VALUE") are evaluated against.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace prewarm {

using DeviceProperties = std::map<std::string, std::string, std::less<>>;

// The vocabulary. Values are exact strings as the API reports them, except
// where noted. A key absent from a device means "unknown", never "empty".
namespace prop {
inline constexpr std::string_view vendor = "vendor";                 // nvidia|intel|amd|cpu
inline constexpr std::string_view opencl_platform = "opencl.platform";             // CL_PLATFORM_NAME
inline constexpr std::string_view opencl_platform_version = "opencl.platform-version"; // CL_PLATFORM_VERSION
inline constexpr std::string_view opencl_device = "opencl.device";                 // CL_DEVICE_NAME
inline constexpr std::string_view opencl_device_version = "opencl.device-version";   // CL_DEVICE_VERSION
inline constexpr std::string_view opencl_driver = "opencl.driver";                 // CL_DRIVER_VERSION
inline constexpr std::string_view pci_id = "pci-id";                 // "0x56a5" (lowercase, 4 hex digits)
inline constexpr std::string_view pci_revision = "pci-revision";     // "0x05"
inline constexpr std::string_view nvidia_driver = "nvidia.driver";   // "580.159.04"
inline constexpr std::string_view nvidia_sm = "nvidia.sm";           // "90" (major*10 + minor)
inline constexpr std::string_view intel_ip_version = "intel.ip-version"; // "12.55.8"
inline constexpr std::string_view intel_driver = "intel.driver";     // NEO version, "22.43.24595"
// The IGC library NEO's compiler cache keys hash: "<bytes>:<mtime seconds>" of
// libigc.so.2 (host/intel_compiler_identity.hpp).
inline constexpr std::string_view intel_igc = "intel.igc";
// The OpenCL extension list of an Intel GPU, as NEO puts it into every OpenCL
// program's internal options (" -cl-ext=-all,+<each extension>", in the
// device's order) and so into every .cl_cache key: "<count>:<first 16 hex
// digits of SHA-256>" of CL_DEVICE_EXTENSIONS with its words joined by single
// spaces (opencl_extensions_value()). A digest, because the list (~2.5 KB)
// exceeds a manifest value; the profile (`prewarm intel-profile`) keeps the
// words. A real card lists cl_khr_pci_bus_info, a virtual device does not.
inline constexpr std::string_view intel_opencl_extensions = "intel.opencl-extensions";
inline constexpr std::string_view level_zero_device = "level-zero.device"; // ze device name
// Framework versions a command workload's probe reports (issue: command workloads):
// "framework.torch", "framework.triton", ... (prefix match).
inline constexpr std::string_view framework_prefix = "framework.";
} // namespace prop

// intel.ip-version from the value NEO reports as CL_DEVICE_IP_VERSION_INTEL
// (and writes into a zebin's product-config note): its HardwareIpVersion,
// architecture (10 bits) . release (8) . revision (6), 0x030e0005 -> "12.56.5"
// (dg2-g11-b1). Not CL_MAKE_VERSION's layout, whatever clinfo prints.
inline std::string
intel_ip_version_text(unsigned value)
{
  return std::to_string(value >> 22) + "." + std::to_string((value >> 14) & 0xffu) + "." +
         std::to_string(value & 0x3fu);
}

// intel.opencl-extensions of a CL_DEVICE_EXTENSIONS string (any spacing).
std::string opencl_extensions_value(std::string_view extensions);

// The vendor property of an OpenCL device from its CL_DEVICE_TYPE (is it a
// CPU?) and CL_DEVICE_VENDOR_ID. A CPU device is "cpu" whoever made the CPU
// (PoCL reports the CPU maker's id, 0x8086 here); empty when unknown.
inline std::string
opencl_vendor_name(bool cpu_device, unsigned vendor_id)
{
  if (cpu_device) {
    return "cpu";
  }
  switch (vendor_id) {
    case 0x10de:
      return "nvidia";
    case 0x8086:
      return "intel";
    case 0x1002:
      return "amd";
    default:
      return {};
  }
}

} // namespace prewarm
