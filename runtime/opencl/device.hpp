// SPDX-License-Identifier: Apache-2.0
// OpenCL platforms and devices as this process sees them (ICDs installed
// under /etc/OpenCL/vendors), with their identity as DeviceProperties.
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"
#include "opencl/cl.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace prewarm::opencl {

struct DeviceRef
{
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  int index = 0;            // position in enumerate_devices(), what "--device N" names
  std::string description;  // "0: NVIDIA H100 80GB HBM3 (NVIDIA CUDA, OpenCL 3.0 CUDA 12.4, driver 550.54)"
  DeviceProperties properties; // vendor, opencl.*, pci-id, nvidia.sm (see base/device_properties.hpp)
  bool is_gpu = false;
};

// Every device of every platform, in platform then device order. No platform
// at all is an error ("no OpenCL platform: install pocl-opencl-icd").
Result<std::vector<DeviceRef>> enumerate_devices();

// "" = the only/first GPU, else the first device; "N" = index N; anything
// else = the first device whose platform or device name contains it
// (case-insensitive). No match is an error listing the devices: this never
// falls back to another device.
Result<DeviceRef> select_device(std::string_view selector);
Result<DeviceRef> select_device(const std::vector<DeviceRef>& devices, std::string_view selector);

// Queries as strings (trailing NULs removed).
Result<std::string> platform_info_string(cl_platform_id platform, cl_platform_info what);
Result<std::string> device_info_string(cl_device_id device, cl_device_info what);
bool device_has_extension(cl_device_id device, std::string_view extension);

} // namespace prewarm::opencl
