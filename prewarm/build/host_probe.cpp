// SPDX-License-Identifier: Apache-2.0
#include "build/host_probe.hpp"

#include "aot/ocloc.hpp"
#include "base/log.hpp"
#include "opencl/device.hpp"

#include <algorithm>

namespace prewarm::build {
namespace {

void
probe_opencl(manifest::HostCapabilities& host)
{
  auto devices = opencl::enumerate_devices();
  if (!devices) {
    host.devices_error = devices.error().message();
    log::verbose("OpenCL: {}", host.devices_error);
    return;
  }
  for (const auto& ref : *devices) {
    host.devices.push_back(manifest::HostDevice{ref.index, ref.description, ref.properties, ref.is_gpu});
  }
}

void
probe_ocloc(manifest::HostCapabilities& host, const manifest::TargetRegistry& registry)
{
  auto ocloc = aot::Ocloc::locate();
  if (!ocloc) {
    log::verbose("ocloc: {}", ocloc.error().message());
    return;
  }
  host.ocloc.path = ocloc->executable().string();
  host.ocloc.version = ocloc->driver_version();
  for (const auto& target : registry.targets()) {
    if (target.vendor != manifest::Vendor::intel || host.ocloc.knows(target.ocloc_device)) {
      continue;
    }
    auto device = ocloc->lookup_device(target.ocloc_device);
    if (!device) {
      log::verbose("ocloc ids {}: {}", target.ocloc_device, device.error().message());
      continue;
    }
    if (device->known) {
      host.ocloc.known_devices.push_back(target.ocloc_device);
      if (!target.ip_version.empty() && device->ip_version != target.ip_version) {
        log::warn("target {}: the registry says IP {} for '{}', ocloc {} says {}", target.name, target.ip_version,
                  target.ocloc_device, host.ocloc.version, device->ip_version);
      }
    }
  }
}

} // namespace

manifest::HostCapabilities
probe_host_capabilities(const manifest::TargetRegistry& registry)
{
  manifest::HostCapabilities host;
  probe_opencl(host);
  probe_ocloc(host, registry);
  return host;
}

} // namespace prewarm::build
