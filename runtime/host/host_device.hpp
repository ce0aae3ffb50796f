// SPDX-License-Identifier: Apache-2.0
// One device this host offers, as the runtime sees it when it decides which
// slices of a bundle apply. Properties use the vocabulary of
// base/device_properties.hpp, so slice requirements evaluate against them.
#pragma once

#include "base/device_properties.hpp"

#include <span>
#include <string>
#include <vector>

namespace prewarm::host {

struct HostDevice
{
  std::string description; // "OpenCL 0: NVIDIA H100 ...", "PCI 0000:03:00.0 intel 0x56a5"
  DeviceProperties properties;
};

// The property maps alone, in order (what bundle::match_slice takes).
std::vector<DeviceProperties> properties_of(std::span<const HostDevice> devices);

} // namespace prewarm::host
