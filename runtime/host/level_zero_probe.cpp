// SPDX-License-Identifier: Apache-2.0
#include "host/level_zero_probe.hpp"

#include "base/log.hpp"
#include "host/host_description_file.hpp"
#include "host/subprocess.hpp"

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
  // The child reports in the host-description JSON, or "!" and the reason
  // when there is nothing to enumerate (zeInit finds no driver).
  PW_ASSIGN(const std::string json, run_isolated(
                                      [] {
                                        auto found = level_zero::enumerate_devices();
                                        if (!found) {
                                          return "!" + found.error().message();
                                        }
                                        std::vector<HostDevice> devices;
                                        for (auto& d : *found) {
                                          devices.push_back({d.description, d.properties});
                                        }
                                        return host_description_json(devices);
                                      },
                                      timeout));
  if (json.starts_with("!")) {
    log::verbose("no Level Zero devices: {}", std::string_view(json).substr(1));
    return std::vector<HostDevice>{};
  }
  return parse_host_description(json, "Level Zero probe");
}

#else

Result<std::vector<HostDevice>>
probe_level_zero_devices(std::chrono::milliseconds)
{
  return std::vector<HostDevice>{};
}

#endif

} // namespace prewarm::host
