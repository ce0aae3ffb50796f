// SPDX-License-Identifier: Apache-2.0
#include "host/opencl_probe.hpp"

#include "base/log.hpp"
#include "host/host_description_file.hpp"
#include "host/subprocess.hpp"

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
  // The child reports in the host-description JSON (the same format as the
  // test double), or "!" and the reason when enumeration failed (no platform
  // at all is the common case: no ICD installed in this container).
  PW_ASSIGN(const std::string json, run_isolated(
                                      [] {
                                        auto found = opencl::enumerate_devices();
                                        if (!found) {
                                          return "!" + found.error().message();
                                        }
                                        std::vector<HostDevice> devices;
                                        for (auto& d : *found) {
                                          devices.push_back({"OpenCL " + d.description, d.properties});
                                        }
                                        return host_description_json(devices);
                                      },
                                      timeout));
  if (json.starts_with("!")) {
    log::info("no OpenCL devices: {}", std::string_view(json).substr(1));
    return std::vector<HostDevice>{};
  }
  return parse_host_description(json, "OpenCL probe");
}

#else

Result<std::vector<HostDevice>>
probe_opencl_devices(std::chrono::milliseconds)
{
  return std::vector<HostDevice>{};
}

#endif

} // namespace prewarm::host
