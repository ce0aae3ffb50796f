// SPDX-License-Identifier: Apache-2.0
#include "host/level_zero_probe.hpp"

#include "host/isolated_enumeration.hpp"

#if PREWARM_HOST_WITH_LEVEL_ZERO
#include "level_zero/device.hpp"
#endif

namespace prewarm::host {

bool
level_zero_probe_available()
{
  return PREWARM_HOST_WITH_LEVEL_ZERO != 0;
}

#if PREWARM_HOST_WITH_LEVEL_ZERO

Result<std::vector<HostDevice>>
probe_level_zero_devices(std::chrono::milliseconds timeout)
{
  // No driver (zeInit finds none) is the common case: no Intel GPU here.
  return enumerate_isolated(
    "Level Zero",
    []() -> Result<std::vector<HostDevice>> {
      PW_ASSIGN(auto found, level_zero::enumerate_devices());
      std::vector<HostDevice> devices;
      for (auto& d : found) {
        devices.push_back({d.description, d.properties});
      }
      return devices;
    },
    timeout);
}

#else

Result<std::vector<HostDevice>>
probe_level_zero_devices(std::chrono::milliseconds)
{
  return std::vector<HostDevice>{};
}

#endif

} // namespace prewarm::host
