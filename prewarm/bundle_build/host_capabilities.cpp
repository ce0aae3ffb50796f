// SPDX-License-Identifier: Apache-2.0
#include "bundle_build/host_capabilities.hpp"

#include "aot/ocloc.hpp"
#include "aot/toolchains.hpp"
#include "base/log.hpp"
#include "host/host_description_file.hpp"
#include "host/isolated_enumeration.hpp"
#include "host/probe_host.hpp"
#include "opencl/device.hpp"
#include "virtual_device/virtual_device.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace prewarm::bundle_build {
namespace {

// The enumeration runs in a forked child: a driver that holds its device
// once initialised (seen with NVIDIA's OpenCL on the GPU machine: after this
// process enumerated the H200, the `prewarm run-job` children it spawned saw
// only PoCL) must not be initialised in the process that spawns the jobs. A
// crashing or hanging ICD is also contained there.
void
probe_opencl(manifest::HostCapabilities& host)
{
  const auto listing = host::list_isolated(
    []() -> Result<std::string> {
      PW_ASSIGN(const auto devices, opencl::enumerate_devices());
      nlohmann::json out = nlohmann::json::array();
      for (const auto& ref : devices) {
        out.push_back({{"index", ref.index},
                       {"description", ref.description},
                       {"properties", ref.properties},
                       {"is_gpu", ref.is_gpu}});
      }
      return out.dump();
    },
    std::chrono::seconds(60));
  if (!listing || !listing->found) {
    host.devices_error = listing ? listing->text : listing.error().message();
    log::verbose("OpenCL: {}", host.devices_error);
    return;
  }
  try {
    for (const auto& d : nlohmann::json::parse(listing->text)) {
      DeviceProperties properties;
      for (const auto& [key, value] : d["properties"].items()) {
        properties.emplace(key, value.get<std::string>());
      }
      host.devices.push_back(manifest::HostDevice{d["index"].get<int>(),
                                                  d["description"].get<std::string>(), std::move(properties),
                                                  d["is_gpu"].get<bool>()});
    }
  } catch (const nlohmann::json::exception& e) {
    host.devices_error = std::string("OpenCL device probe: unreadable result: ") + e.what();
  }
}

// Each Intel target's device is asked of the toolchains in precedence order
// (aot/toolchains.hpp) until one knows it: the plan needs only the first, and
// `ocloc ids` costs a process start (~0.1 s) per question.
void
probe_ocloc(manifest::HostCapabilities& host, const manifest::TargetRegistry& registry)
{
  const auto toolchains = aot::locate_toolchains();
  if (toolchains.empty()) {
    log::verbose("ocloc: none found (PATH, /usr/bin/ocloc, Intel root {})", aot::intel_root().string());
    return;
  }
  for (const auto& toolchain : toolchains) {
    manifest::OclocInfo info;
    info.path = toolchain.ocloc.executable().string();
    info.version = toolchain.ocloc.driver_version();
    info.origin = toolchain.origin;
    info.source = toolchain.source;
    host.oclocs.push_back(std::move(info));
  }
  for (const auto& target : registry.targets()) {
    if (target.vendor != manifest::Vendor::intel || host.ocloc_for(target.ocloc_device) != nullptr) {
      continue;
    }
    for (std::size_t i = 0; i < toolchains.size(); ++i) {
      auto& info = host.oclocs[i];
      if (std::ranges::find(info.known_devices, target.ocloc_device) != info.known_devices.end()) {
        break;
      }
      auto device = toolchains[i].ocloc.lookup_device(target.ocloc_device);
      if (!device) {
        log::verbose("ocloc ids {}: {}", target.ocloc_device, device.error().message());
        continue;
      }
      if (!device->known) {
        continue;
      }
      info.known_devices.push_back(target.ocloc_device);
      if (!target.ip_version.empty() && device->ip_version != target.ip_version) {
        log::warn("target {}: the registry says IP {} for '{}', {} says {}", target.name, target.ip_version,
                  target.ocloc_device, info.describe(), device->ip_version);
      }
      break;
    }
  }
}

// The OpenCL devices with what the runtime's host probe adds to them: the
// PCI device id and SM of NVIDIA GPUs (nvidia-smi, sysfs), which OpenCL does
// not report and which tell an H100 from an H200 (host/probe_host.hpp).
void
add_gpu_identity(manifest::HostCapabilities& host)
{
  std::vector<host::HostDevice> records;
  for (const auto& device : host.devices) {
    records.push_back({device.description, device.properties});
  }
  const auto merged = host::with_gpu_identity(std::move(records));
  for (std::size_t i = 0; i < host.devices.size() && i < merged.size(); ++i) {
    host.devices[i].properties = merged[i].properties;
  }
}

// TEST DOUBLE: PREWARM_HOST_DEVICES (host/host_description_file.hpp) names
// the devices instead of the probe, so that plans for hardware this machine
// lacks can be tested. Device N of the file is `--device N`.
bool
use_host_description(manifest::HostCapabilities& host)
{
  const char* file = std::getenv(std::string(host::k_host_devices_variable).c_str());
  if (file == nullptr || *file == '\0') {
    return false;
  }
  log::warn("using test host description from {} ({} is a test double; the host was not probed)", file,
            host::k_host_devices_variable);
  auto devices = host::load_host_description(file);
  if (!devices) {
    host.devices_error = devices.error().message();
    log::error("{}", host.devices_error);
    return true;
  }
  int index = 0;
  for (const auto& device : *devices) {
    const auto vendor = device.properties.find(prop::vendor);
    const bool is_gpu = vendor == device.properties.end() || vendor->second != "cpu";
    host.devices.push_back(manifest::HostDevice{index, fmt::format("{}: {}", index, device.description),
                                                device.properties, is_gpu});
    ++index;
  }
  return true;
}

} // namespace

manifest::HostCapabilities
probe_host_capabilities(const manifest::TargetRegistry& registry)
{
  manifest::HostCapabilities host;
  if (!use_host_description(host)) {
    probe_opencl(host);
    add_gpu_identity(host);
  }
  probe_ocloc(host, registry);
  // Looked up by the function the executors use: the plan names what the
  // build would miss (a user who copied `prewarm` alone).
  host.virtual_device_missing = virtual_device::missing_build_helpers();
  return host;
}

} // namespace prewarm::bundle_build
