// SPDX-License-Identifier: Apache-2.0
#include "host/probe_host.hpp"

#include "base/files.hpp"
#include "base/log.hpp"
#include "host/cpu_probe.hpp"
#include "host/host_description_file.hpp"
#include "host/intel_compiler_identity.hpp"
#include "host/level_zero_probe.hpp"
#include "host/opencl_probe.hpp"
#include "host/subprocess.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace prewarm::host {

std::vector<DeviceProperties>
properties_of(std::span<const HostDevice> devices)
{
  std::vector<DeviceProperties> out;
  out.reserve(devices.size());
  for (const auto& d : devices) {
    out.push_back(d.properties);
  }
  return out;
}

namespace {

bool
is_opencl_gpu_of(const HostDevice& device, std::string_view vendor)
{
  const auto v = device.properties.find(prop::vendor);
  return v != device.properties.end() && v->second == vendor;
}

// The identity sysfs + nvidia-smi give one PCI GPU.
DeviceProperties
pci_identity(const PciDisplayDevice& gpu, const std::vector<NvidiaGpu>& nvidia_gpus)
{
  DeviceProperties p;
  p.emplace(std::string(prop::pci_id), gpu.device_id);
  if (!gpu.revision.empty()) {
    p.emplace(std::string(prop::pci_revision), gpu.revision);
  }
  for (const auto& n : nvidia_gpus) {
    if (n.pci_address == gpu.address) {
      p.emplace(std::string(prop::nvidia_sm), n.sm);
    }
  }
  return p;
}

// The PCI GPUs (sysfs, and nvidia-smi's where sysfs showed none): their
// identity joins the one OpenCL GPU of their vendor, else each is a record.
void
merge_pci_gpus(const HostFindings& findings, std::vector<HostDevice>& devices)
{
  // PCI GPUs grouped by vendor name; unknown vendors are listed as they are.
  std::map<std::string, std::vector<const PciDisplayDevice*>> by_vendor;
  for (const auto& gpu : findings.pci_gpus) {
    by_vendor[vendor_name_of(gpu.vendor_id)].push_back(&gpu);
  }
  // nvidia-smi GPUs that sysfs did not show (no /sys in the container).
  std::vector<PciDisplayDevice> smi_only;
  for (const auto& n : findings.nvidia_gpus) {
    bool seen = false;
    for (const auto& gpu : findings.pci_gpus) {
      seen = seen || gpu.address == n.pci_address;
    }
    if (!seen) {
      smi_only.push_back({n.pci_address, "0x10de", n.pci_id, "", "0x030200", ""});
    }
  }
  for (const auto& gpu : smi_only) {
    by_vendor["nvidia"].push_back(&gpu);
  }

  for (const auto& [vendor, gpus] : by_vendor) {
    std::set<DeviceProperties> identities;
    for (const auto* gpu : gpus) {
      identities.insert(pci_identity(*gpu, findings.nvidia_gpus));
    }
    bool merged = false;
    if (!vendor.empty() && identities.size() == 1) {
      for (auto& device : devices) {
        if (is_opencl_gpu_of(device, vendor)) {
          for (const auto& [key, value] : *identities.begin()) {
            device.properties.emplace(key, value); // keeps what OpenCL reported
          }
          merged = true;
        }
      }
    }
    if (merged) {
      continue;
    }
    for (const auto* gpu : gpus) {
      HostDevice record;
      record.properties = pci_identity(*gpu, findings.nvidia_gpus);
      if (!vendor.empty()) {
        record.properties.emplace(std::string(prop::vendor), vendor);
      }
      record.description = fmt::format("PCI {} {} {}{}", gpu->address, vendor.empty() ? gpu->vendor_id : vendor,
                                       gpu->device_id, gpu->revision.empty() ? "" : " rev " + gpu->revision);
      devices.push_back(std::move(record));
    }
  }
}

// A Level Zero device adds to the record of the same GPU (vendor, PCI id).
void
merge_level_zero_devices(const HostFindings& findings, std::vector<HostDevice>& devices)
{
  for (const auto& ze : findings.level_zero_devices) {
    const auto same_gpu = [&](const HostDevice& d) {
      for (const auto key : {prop::vendor, prop::pci_id}) {
        const auto a = d.properties.find(key);
        const auto b = ze.properties.find(key);
        if (a == d.properties.end() || b == ze.properties.end() || a->second != b->second) {
          return false;
        }
      }
      return true;
    };
    if (auto it = std::ranges::find_if(devices, same_gpu); it != devices.end()) {
      for (const auto& [key, value] : ze.properties) {
        it->properties.emplace(key, value); // keeps what OpenCL / sysfs reported
      }
    } else {
      devices.push_back(ze);
    }
  }
}

// The driver-wide facts: NVIDIA's driver, Intel's IGC, Python frameworks.
void
add_driver_facts(const HostFindings& findings, std::vector<HostDevice>& devices)
{
  if (findings.nvidia_driver) {
    bool any = false;
    for (auto& device : devices) {
      if (is_opencl_gpu_of(device, "nvidia")) {
        device.properties.insert_or_assign(std::string(prop::nvidia_driver), *findings.nvidia_driver);
        any = true;
      }
    }
    if (!any) {
      // A driver with no visible GPU record (no sysfs, no smi, no ICD): still
      // worth a record, since CUDA caches bind to the driver alone.
      devices.push_back({"NVIDIA driver " + *findings.nvidia_driver,
                         {{std::string(prop::vendor), "nvidia"},
                          {std::string(prop::nvidia_driver), *findings.nvidia_driver}}});
    }
  }

  if (findings.igc_identity) {
    for (auto& device : devices) {
      if (is_opencl_gpu_of(device, "intel")) {
        device.properties.emplace(std::string(prop::intel_igc), *findings.igc_identity);
      }
    }
  }

  if (findings.cpu && !findings.cpu->empty()) {
    devices.push_back({describe_cpu(*findings.cpu), *findings.cpu});
  }

  if (!findings.frameworks.empty()) {
    if (devices.empty()) {
      devices.push_back({"Python frameworks", {}});
    }
    for (auto& device : devices) {
      for (const auto& [key, version] : findings.frameworks) {
        device.properties.insert_or_assign(key, version);
      }
    }
  }
}

} // namespace

std::vector<HostDevice>
merge_host_findings(const HostFindings& findings)
{
  std::vector<HostDevice> devices = findings.opencl_devices;
  merge_pci_gpus(findings, devices);
  merge_level_zero_devices(findings, devices);
  add_driver_facts(findings, devices);
  return devices;
}

namespace {

// The NVIDIA driver, nvidia-smi's GPUs and sysfs PCI GPUs: the sources of PCI
// identity, shared by probe_host() and with_gpu_identity().
void
collect_gpu_identity(HostFindings& findings, const HostProbeOptions& options)
{
  const auto version_file = options.proc_root / "driver/nvidia/version";
  if (auto text = read_file(version_file.string(), 64 * 1024)) {
    findings.nvidia_driver = parse_nvidia_driver_version(*text);
    if (!findings.nvidia_driver) {
      log::warn("{}: no driver version found in it", version_file.string());
    }
  } // absent: no NVIDIA kernel driver, the common case

  if (findings.nvidia_driver && !options.nvidia_smi.empty()) {
    if (auto csv = run_command(nvidia_smi_query_argv(options.nvidia_smi), options.timeout)) {
      findings.nvidia_gpus = parse_nvidia_smi_query(*csv);
    } else {
      log::verbose("nvidia-smi not used: {}", csv.error().message());
    }
  }

  findings.pci_gpus = scan_pci_display_devices(options.sys_root);
  // Only where an Intel GPU is: a stat per library directory otherwise wasted.
  if (std::ranges::any_of(findings.pci_gpus, [](const auto& gpu) { return gpu.vendor_id == "0x8086"; }) ||
      std::ranges::any_of(findings.opencl_devices, [](const auto& d) { return is_opencl_gpu_of(d, "intel"); })) {
    findings.igc_identity = host_igc_identity();
  }
}

} // namespace

std::vector<HostDevice>
with_gpu_identity(std::vector<HostDevice> opencl_devices, const HostProbeOptions& options)
{
  HostFindings findings;
  findings.opencl_devices = std::move(opencl_devices);
  collect_gpu_identity(findings, options);
  return merge_host_findings(findings);
}

Result<std::vector<HostDevice>>
probe_host(const HostProbeOptions& options)
{
  if (const char* file = std::getenv(std::string(k_host_devices_variable).c_str()); file && *file) {
    log::warn("using test host description from {} ({} is a test double; the host was not probed)", file,
              k_host_devices_variable);
    return load_host_description(file);
  }

  HostFindings findings;
  if (options.opencl == OpenclProbe::enabled && opencl_probe_available()) {
    if (auto found = probe_opencl_devices(options.timeout)) {
      findings.opencl_devices = std::move(*found);
    } else {
      log::warn("OpenCL devices not probed: {}", found.error().message());
    }
  }

  if (options.level_zero == LevelZeroProbe::enabled && level_zero_probe_available()) {
    if (auto found = probe_level_zero_devices(options.timeout)) {
      findings.level_zero_devices = std::move(*found);
    } else {
      log::warn("Level Zero devices not probed: {}", found.error().message());
    }
  }

  collect_gpu_identity(findings, options);
  findings.cpu = probe_cpu(options.proc_root);

  if (options.frameworks.wanted) {
    auto found = find_framework_versions(options.frameworks, options.python, options.timeout);
    if (found.versions.empty()) {
      // No Python in the image is the common case for non-Python apps; a
      // bundle whose slices recorded where the frameworks were gets a warning.
      if (options.frameworks.site_packages.empty()) {
        log::verbose("framework versions not probed: {}", found.source);
      } else {
        log::warn("framework versions not found: {}", found.source);
      }
    } else {
      log::verbose("framework versions from {}", found.source);
    }
    findings.frameworks = std::move(found.versions);
  }
  return merge_host_findings(findings);
}

std::string
describe_host(const std::vector<HostDevice>& devices)
{
  if (devices.empty()) {
    return "no devices";
  }
  std::string out;
  for (const auto& d : devices) {
    out += d.description + ":";
    const char* sep = " ";
    for (const auto& [key, value] : d.properties) {
      out += fmt::format("{}{}={}", sep, key, value);
      sep = ", ";
    }
    out += "\n";
  }
  out.pop_back();
  return out;
}

} // namespace prewarm::host
