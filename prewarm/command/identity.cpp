// SPDX-License-Identifier: Apache-2.0
#include "command/identity.hpp"

#include "base/encoding.hpp"
#include "base/log.hpp"
#include "host/framework_probe.hpp"
#include "jobs/slice_identity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <sstream>

namespace prewarm::command {

namespace {

using bundle::CacheKind;
using bundle::Requirement;

bool
is_dotted_version(std::string_view token)
{
  if (token.empty() || token.front() == '.' || token.back() == '.') {
    return false;
  }
  bool dot = false;
  for (const char c : token) {
    if (c == '.') {
      dot = true;
    } else if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
      return false;
    }
  }
  return dot;
}

using jobs::require_values;

bool
has_value(const DeviceProperties& device, std::string_view key, std::string_view value)
{
  const auto it = device.find(key);
  return it != device.end() && it->second == value;
}

bool
contains(const DeviceProperties& device, std::string_view key, std::string_view needle)
{
  const auto it = device.find(key);
  return it != device.end() && it->second.find(needle) != std::string::npos;
}

std::vector<const DeviceProperties*>
select_devices(const std::vector<DeviceProperties>& devices, bool (*keep)(const DeviceProperties&))
{
  std::vector<const DeviceProperties*> chosen;
  for (const auto& d : devices) {
    if (keep(d)) {
      chosen.push_back(&d);
    }
  }
  return chosen;
}

bool
is_pocl(const DeviceProperties& d)
{
  return contains(d, prop::opencl_platform, "Portable Computing Language") ||
         contains(d, prop::opencl_platform_version, "PoCL") || contains(d, prop::opencl_platform, "PoCL");
}

bool
is_intel_gpu(const DeviceProperties& d)
{
  return has_value(d, prop::vendor, "intel") && d.contains(prop::pci_id);
}

void
require_frameworks(KindIdentity& identity, const IdentityFacts& facts)
{
  // Dynamo's entries hold Python bytecode: valid for one Python version only.
  std::vector<std::string_view> names = {"framework.torch", "framework.triton"};
  if (identity.kind == CacheKind::dynamo) {
    names.push_back("framework.python");
  }
  for (const std::string_view name : names) {
    if (const auto it = facts.frameworks.find(name); it != facts.frameworks.end()) {
      identity.requirements.push_back(Requirement{std::string(name), "==", it->second});
    } else {
      identity.warnings.push_back(fmt::format(
        "{}: no {} version known (the command is not a Python interpreter, or the probe could not "
        "import it); the slice does not check it",
        to_string(identity.kind), name.substr(prop::framework_prefix.size())));
    }
  }
}

} // namespace

KindIdentity
identify_kind(CacheKind kind, const IdentityFacts& facts, FrameworkRequirements frameworks)
{
  KindIdentity identity;
  identity.kind = kind;
  const std::string what_for(to_string(kind));
  std::vector<const DeviceProperties*> nvidia;
  for (const auto& d : facts.nvidia_gpus) {
    nvidia.push_back(&d);
  }
  switch (kind) {
  case CacheKind::cuda:
    // The ComputeCache is invalidated by any driver change, and in a container
    // the driver is the host's: the strongest check a slice can make.
    require_values(identity.requirements, identity.warnings, nvidia, prop::nvidia_driver, what_for);
    require_values(identity.requirements, identity.warnings, nvidia, prop::nvidia_sm, what_for);
    break;
  case CacheKind::triton:
  case CacheKind::inductor:
  case CacheKind::dynamo:
    if (frameworks == FrameworkRequirements::required) {
      require_frameworks(identity, facts);
    }
    if (!nvidia.empty()) {
      // A cubin is for one SM; Inductor's key holds the device name too.
      require_values(identity.requirements, identity.warnings, nvidia, prop::nvidia_sm, what_for);
    }
    break;
  case CacheKind::pycache:
    // Bytecode depends on the Python version only (its magic number and the
    // cpython-3XY in each name); no device, no framework.
    if (frameworks == FrameworkRequirements::required) {
      if (const auto it = facts.frameworks.find("framework.python"); it != facts.frameworks.end()) {
        identity.requirements.push_back(Requirement{"framework.python", "==", it->second});
      } else {
        identity.warnings.push_back("pycache: no Python version known (the command is not a Python interpreter, "
                                    "or the probe failed); the slice does not check it (Python itself ignores "
                                    "bytecode of another version)");
      }
    }
    break;
  case CacheKind::pocl: {
    const auto devices = select_devices(facts.opencl_devices, is_pocl);
    if (devices.empty()) {
      identity.warnings.push_back("pocl: no PoCL device on the build host; the slice does not check "
                                  "the PoCL build or device");
      break;
    }
    // The built-in executor's keys for a PoCL device (jobs/slice_identity.hpp),
    // so command and built-in caches of one device share a slice.
    for (const auto key : jobs::pocl_requirement_keys()) {
      require_values(identity.requirements, identity.warnings, devices, key, what_for);
    }
    break;
  }
  case CacheKind::neo:
  case CacheKind::sycl: {
    const auto devices = select_devices(facts.opencl_devices, is_intel_gpu);
    if (devices.empty()) {
      identity.warnings.push_back(fmt::format(
        "{}: no Intel GPU with a PCI id on the build host; the slice does not check device or driver",
        what_for));
      break;
    }
    // NEO hashes the PCI device id and revision and the IGC build; SYCL the
    // device name and driver version string.
    require_values(identity.requirements, identity.warnings, devices, prop::pci_id, what_for);
    const bool knows_neo_version = std::any_of(devices.begin(), devices.end(),
                                               [](const auto* d) { return d->contains(prop::intel_driver); });
    require_values(identity.requirements, identity.warnings, devices,
                   knows_neo_version ? prop::intel_driver : prop::opencl_driver, what_for);
    if (kind == CacheKind::sycl) {
      require_values(identity.requirements, identity.warnings, devices, prop::opencl_device, what_for);
    }
    break;
  }
  case CacheKind::programs: {
    // prewarm's own store keys every binary by device and driver itself, so
    // the slice is never wrong elsewhere, but its records hit only on the
    // OpenCL devices the layer recorded them on: the slice requires one of
    // them, by the pocl kind's keys (a command's PoCL cache and its layer
    // records of one device share a slice).
    std::vector<const DeviceProperties*> devices;
    for (const auto& d : facts.opencl_devices) {
      devices.push_back(&d);
    }
    if (devices.empty()) {
      identity.warnings.push_back("programs: no OpenCL device known on the build host; the slice does not check "
                                  "the device or driver its records were made on");
      break;
    }
    for (const auto key : {prop::vendor, prop::opencl_platform_version, prop::opencl_device,
                           prop::opencl_device_version, prop::opencl_driver}) {
      require_values(identity.requirements, identity.warnings, devices, key, what_for);
    }
    break;
  }
  }
  std::sort(identity.requirements.begin(), identity.requirements.end());
  return identity;
}

std::vector<bundle::Requirement>
merge_requirements(const std::vector<KindIdentity>& kinds)
{
  std::vector<Requirement> merged;
  for (const auto& k : kinds) {
    merged.insert(merged.end(), k.requirements.begin(), k.requirements.end());
  }
  std::sort(merged.begin(), merged.end());
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  return merged;
}

std::optional<std::string>
parse_nvidia_proc_version(std::string_view text)
{
  const auto line_end = text.find('\n');
  const auto first_line = text.substr(0, line_end);
  if (first_line.find("NVRM version:") == std::string_view::npos) {
    return std::nullopt;
  }
  std::istringstream words{std::string(first_line)};
  std::string word;
  while (words >> word) {
    if (is_dotted_version(word)) {
      return word;
    }
  }
  return std::nullopt;
}

std::vector<DeviceProperties>
parse_nvidia_smi_csv(std::string_view text)
{
  std::vector<DeviceProperties> gpus;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    // The name comes last and may hold commas of its own.
    for (int i = 0; i < 3; ++i) {
      const auto comma = line.find(',', start);
      if (comma == std::string::npos) {
        break;
      }
      fields.emplace_back(trim(std::string_view(line).substr(start, comma - start)));
      start = comma + 1;
    }
    if (fields.size() != 3) {
      continue;
    }
    fields.emplace_back(trim(std::string_view(line).substr(start)));
    DeviceProperties gpu;
    gpu.emplace(prop::vendor, "nvidia");
    if (is_dotted_version(fields[0])) {
      gpu.emplace(prop::nvidia_driver, fields[0]);
    }
    // compute_cap "9.0" -> "90" (major*10 + minor, the vocabulary's form).
    if (const auto dot = fields[1].find('.'); dot != std::string::npos && is_dotted_version(fields[1])) {
      const int major = std::stoi(fields[1].substr(0, dot));
      const int minor = std::stoi(fields[1].substr(dot + 1));
      gpu.emplace(prop::nvidia_sm, std::to_string(major * 10 + minor));
    }
    // pci.device_id "0x233010DE": device id in the high 16 bits, vendor below.
    std::string pci = fields[2];
    std::transform(pci.begin(), pci.end(), pci.begin(), [](unsigned char c) { return std::tolower(c); });
    if (pci.size() == 10 && pci.starts_with("0x") && pci.ends_with("10de")) {
      gpu.emplace(prop::pci_id, "0x" + pci.substr(2, 4));
    }
    if (!fields[3].empty()) {
      gpu.emplace("nvidia.name", fields[3]); // informational; not a requirement key
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::vector<DeviceProperties>
probe_nvidia_gpus()
{
  std::optional<std::string> proc_driver;
  // /proc files report size 0: read as a stream, not with read_file().
  if (std::ifstream in("/proc/driver/nvidia/version"); in) {
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    proc_driver = parse_nvidia_proc_version(text);
  }
  SubprocessSpec spec;
  spec.argv = {"nvidia-smi", "--query-gpu=driver_version,compute_cap,pci.device_id,name",
               "--format=csv,noheader"};
  spec.environment = inherited_environment();
  spec.timeout = std::chrono::seconds(30);
  spec.kill_grace = std::chrono::seconds(2);
  std::vector<DeviceProperties> gpus;
  if (auto run = run_subprocess(spec); run && run->succeeded()) {
    gpus = parse_nvidia_smi_csv(run->output_tail);
  } else if (run) {
    log::verbose("nvidia-smi {}: no GPU details", run->describe(spec.timeout));
  } else if (proc_driver) {
    log::verbose("nvidia-smi: {}; using /proc/driver/nvidia/version only", run.error().message());
  }
  if (proc_driver) {
    if (gpus.empty()) {
      gpus.push_back(DeviceProperties{{std::string(prop::vendor), "nvidia"},
                                      {std::string(prop::nvidia_driver), *proc_driver}});
    }
    for (auto& gpu : gpus) {
      // The kernel module's version is what a container shares with its host.
      gpu[std::string(prop::nvidia_driver)] = *proc_driver;
    }
  }
  return gpus;
}

ProbedFrameworks
probe_frameworks(const std::string& python, const Environment& environment,
                 const std::filesystem::path& working_directory, std::vector<std::string>& warnings)
{
  SubprocessSpec spec;
  spec.argv = {python, "-c", std::string(host::framework_version_script())};
  spec.environment = environment;
  spec.working_directory = working_directory;
  spec.timeout = std::chrono::seconds(120);
  spec.kill_grace = std::chrono::seconds(2);
  auto run = run_subprocess(spec);
  if (!run) {
    warnings.push_back(fmt::format("framework probe: {}", run.error().message()));
    return {};
  }
  if (!run->succeeded()) {
    warnings.push_back(fmt::format("framework probe `{} -c ...` {}", python, run->describe(spec.timeout)));
  }
  return {host::parse_framework_versions(run->output_tail), host::parse_site_packages(run->output_tail)};
}

} // namespace prewarm::command
