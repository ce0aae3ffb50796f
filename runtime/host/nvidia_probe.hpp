// SPDX-License-Identifier: Apache-2.0
// NVIDIA identity without NVML: the kernel module's version file and, when
// the tool is installed, nvidia-smi. A CUDA/OpenCL cache is valid only for
// the host driver that made it (kernel-caches.md §5), so the driver version
// is the one property that matters most here.
#pragma once

#include "base/error.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::host {

// From /proc/driver/nvidia/version:
//   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Wed Jul ..."
//   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ..."
// -> "580.159.04". nullopt when no "Kernel Module" line carries a version.
std::optional<std::string> parse_nvidia_driver_version(std::string_view version_file_text);

struct NvidiaGpu
{
  std::string pci_address; // "0000:18:00.0" (sysfs spelling, lowercase)
  std::string sm;          // "90" (compute capability 9.0)
  std::string pci_id;      // "0x2330"
};

// Output of `nvidia-smi --query-gpu=pci.bus_id,compute_cap,pci.device_id
// --format=csv,noheader`, one GPU per line: "00000000:18:00.0, 9.0, 0x233010DE".
// Lines that do not parse are skipped (the caller logs how many it got).
std::vector<NvidiaGpu> parse_nvidia_smi_query(std::string_view csv);

// The argv that produces the text above.
std::vector<std::string> nvidia_smi_query_argv(std::string_view nvidia_smi);

} // namespace prewarm::host
