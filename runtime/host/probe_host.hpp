// SPDX-License-Identifier: Apache-2.0
// What this host has: the devices a bundle's slices are matched against.
//
// Sources, each optional (a container may see any subset):
//   OpenCL           every device of every ICD (forked child, deadline)
//   Level Zero       every GPU of every driver (forked child, deadline)
//   /proc/driver/nvidia/version   the NVIDIA kernel driver version
//   nvidia-smi       per GPU: PCI address, SM, PCI device id (when installed)
//   sysfs PCI        display-class devices (Intel, AMD, NVIDIA): ids, revision
//   Python           framework.* versions of the application's interpreter
//                    (framework_probe.hpp)
//   uname, cpuinfo   the CPU record (cpu_probe.hpp): every probed host has one
// A source that fails is reported (log::warn) and counts as "no such devices":
// probing never stops the container from starting.
//
// Merging, only where it is unambiguous:
//   - nvidia.driver goes into every NVIDIA record (one driver per host);
//   - the CPU is a record of its own, "CPU <arch>", last (never merged into
//     an OpenCL CPU device: a CPU slice must not depend on PoCL);
//   - framework.* versions go into every record (one Python per container;
//     a record of their own when the host has no device records);
//   - the PCI identity (pci-id, pci-revision, and nvidia.sm for NVIDIA) of a
//     vendor's GPUs is copied into that vendor's OpenCL GPU devices when all
//     of the vendor's PCI GPUs share it; keys the OpenCL device already
//     reports are kept;
//   - PCI GPUs not merged that way (no OpenCL device of their vendor, or a mix
//     of models) are separate records, so a requirement on pci-id still finds
//     them;
//   - intel.igc (host/intel_compiler_identity.hpp: one stat of libigc.so.2)
//     goes into every Intel GPU record (one IGC per host);
//   - a Level Zero device adds its keys (intel.driver, level-zero.device ...)
//     to the first record of the same vendor and pci-id, keeping that
//     record's own; with no such record it is a record of its own.
#pragma once

#include "base/error.hpp"
#include "host/framework_probe.hpp"
#include "host/host_device.hpp"
#include "host/nvidia_probe.hpp"
#include "host/pci_probe.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::host {

enum class OpenclProbe { enabled, disabled };
enum class LevelZeroProbe { enabled, disabled };

struct HostProbeOptions
{
  std::filesystem::path proc_root = "/proc";
  std::filesystem::path sys_root = "/sys";
  std::string nvidia_smi = "nvidia-smi"; // looked up in PATH; absent is fine
  std::string python = framework_python_from_environment(); // empty: no framework probe
  FrameworkSearch frameworks;                                // where to look (framework_probe.hpp)
  OpenclProbe opencl = OpenclProbe::enabled;
  LevelZeroProbe level_zero = LevelZeroProbe::enabled;
  std::chrono::milliseconds timeout{10'000}; // per source that can hang
};

// The raw findings of each source, before merging.
struct HostFindings
{
  std::vector<HostDevice> opencl_devices;
  std::vector<HostDevice> level_zero_devices;
  std::optional<std::string> nvidia_driver;
  std::vector<NvidiaGpu> nvidia_gpus;
  std::vector<PciDisplayDevice> pci_gpus;
  FrameworkVersions frameworks;
  std::optional<std::string> igc_identity; // intel.igc
  std::optional<DeviceProperties> cpu;      // cpu_probe.hpp (probe_host() always sets it)
};

// Merges findings into device records (rules above). Pure; tested directly.
std::vector<HostDevice> merge_host_findings(const HostFindings& findings);

// PREWARM_HOST_DEVICES set: the test double's devices (host_description_file.hpp),
// announced on stderr. Else the probe above. Errors only for a broken test
// double file; real probe failures are warnings.
Result<std::vector<HostDevice>> probe_host(const HostProbeOptions& options = {});

// The PCI identity sources alone (NVIDIA driver, nvidia-smi, sysfs) merged
// into OpenCL device records enumerated elsewhere (the builder enumerates in
// its own child), by the rules above. The first records of the result are
// `opencl_devices`, in order, with what was merged into them.
std::vector<HostDevice> with_gpu_identity(std::vector<HostDevice> opencl_devices,
                                          const HostProbeOptions& options = {});

// One line per device, "description: key=value, ..." (for messages).
std::string describe_host(const std::vector<HostDevice>& devices);

} // namespace prewarm::host
