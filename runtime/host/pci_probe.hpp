// SPDX-License-Identifier: Apache-2.0
// GPUs on the PCI bus, from sysfs: present whether or not a compute driver or
// ICD is installed in the container, which is what lets `status` say "this
// host has an Arc A770 but no OpenCL driver for it".
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace prewarm::host {

struct PciDisplayDevice
{
  std::string address;    // "0000:03:00.0"
  std::string vendor_id;  // "0x8086" (lowercase, as sysfs writes it)
  std::string device_id;  // "0x56a5"
  std::string revision;   // "0x05"
  std::string class_code; // "0x030000"
  std::string kernel_driver; // "i915", "xe" (the bound driver's name); empty: none bound
};

// Every device under SYS/bus/pci/devices whose class is a display controller
// (0x03xxxx), sorted by address. A missing bus directory (no sysfs in this
// container) is an empty list, not an error; an unreadable entry is skipped.
std::vector<PciDisplayDevice> scan_pci_display_devices(const std::filesystem::path& sys_root);

// "0x8086" -> "intel", "0x10de" -> "nvidia", "0x1002" -> "amd"; else "".
std::string vendor_name_of(std::string_view pci_vendor_id);

} // namespace prewarm::host
