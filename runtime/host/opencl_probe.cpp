// SPDX-License-Identifier: Apache-2.0
#include "host/opencl_probe.hpp"

#include "host/isolated_enumeration.hpp"

#if PREWARM_HOST_WITH_OPENCL
#include "opencl/device.hpp"
#endif

namespace prewarm::host {

bool
opencl_probe_available()
{
  return PREWARM_HOST_WITH_OPENCL != 0;
}

#if PREWARM_HOST_WITH_OPENCL

Result<std::vector<HostDevice>>
probe_opencl_devices(std::chrono::milliseconds timeout)
{
  // No platform at all is the common case: no ICD installed in this container.
  return enumerate_isolated(
    "OpenCL",
    []() -> Result<std::vector<HostDevice>> {
      PW_ASSIGN(auto found, opencl::enumerate_devices());
      std::vector<HostDevice> devices;
      for (auto& d : found) {
        devices.push_back({"OpenCL " + d.description, d.properties});
      }
      return devices;
    },
    timeout);
}

#else

Result<std::vector<HostDevice>>
probe_opencl_devices(std::chrono::milliseconds)
{
  return std::vector<HostDevice>{};
}

#endif

} // namespace prewarm::host
