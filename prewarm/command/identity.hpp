// SPDX-License-Identifier: Apache-2.0
// What a captured cache depends on, as slice requirements. A driver cache is
// only good for the GPU and driver that filled it, a framework cache for the
// framework versions that wrote it (docs/research/kernel-caches.md §0, §5–§8), so each
// kind records those facts of the build host and the installer checks them
// against the host it runs on:
//   cuda             nvidia.driver ==, nvidia.sm ==          (host driver: containers share it)
//   triton, inductor framework.torch ==, framework.triton ==, nvidia.sm == (if NVIDIA)
//                    (framework versions unless FrameworkRequirements::recorded)
//   dynamo           as inductor, and framework.python == (its frames hold bytecode)
//   pycache          framework.python == alone (unless recorded)
//   pocl             vendor ==, opencl.platform-version ==, opencl.device ==,
//                    opencl.device-version ==, opencl.driver ==
//   neo, sycl        pci-id ==, intel.driver == (else opencl.driver ==), opencl.device == (sycl)
// Several devices with different values give "in" lists instead of "==".
// A value the bundle grammar cannot hold (PoCL's double-spaced platform
// version) is left out, as the builtin executor does.
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/cache_kind.hpp"
#include "command/subprocess.hpp"
#include "manifest/python_command.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::command {

// Facts about the build host and the program's software, gathered once per job.
struct IdentityFacts
{
  std::vector<DeviceProperties> opencl_devices; // as runtime/opencl reports them
  std::vector<DeviceProperties> nvidia_gpus;    // probe_nvidia_gpus()
  std::map<std::string, std::string, std::less<>> frameworks; // "framework.torch" -> "2.11.0+cu128"
  DeviceProperties cpu; // host/cpu_probe.hpp: the build host's CPU (custom caches on the cpu target)
};

struct KindIdentity
{
  bundle::CacheKind kind = bundle::CacheKind::pocl;
  std::vector<bundle::Requirement> requirements; // sorted
  // Facts that were missing ("no NVIDIA driver found: cuda has no driver requirement").
  std::vector<std::string> warnings;
};

// Whether framework versions become slice requirements (framework.torch ==,
// the default: prewarm-runtime reports the application's Python frameworks,
// host/framework_probe.hpp) or are only recorded (in the job line) for a
// bundle meant to install even where the runtime cannot find the
// interpreter. Those caches check the versions themselves too (their keys
// hold torch_key() and triton_key()): a mismatch would cost misses, and the
// requirement saves installing what cannot hit.
enum class FrameworkRequirements { recorded, required };

KindIdentity identify_kind(bundle::CacheKind kind, const IdentityFacts& facts,
                           FrameworkRequirements frameworks = FrameworkRequirements::required);

// Union of several kinds' requirements (a slice has one list). Requirements on
// the same key are merged when equal; differing ones are kept both, which a
// device can never satisfy, so callers should keep such kinds in separate
// slices (see CommandJobResult::slices()).
std::vector<bundle::Requirement> merge_requirements(const std::vector<KindIdentity>& kinds);

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue ..." -> "580.95.05".
std::optional<std::string> parse_nvidia_proc_version(std::string_view text);

// `nvidia-smi --query-gpu=driver_version,compute_cap,pci.device_id,name
// --format=csv,noheader` output -> one property map per GPU (vendor,
// nvidia.driver, nvidia.sm "90", pci-id "0x2330").
std::vector<DeviceProperties> parse_nvidia_smi_csv(std::string_view text);

// The NVIDIA GPUs of this host: nvidia-smi when it runs, else only the driver
// version from /proc/driver/nvidia/version. No NVIDIA driver: empty. Never
// fails: a probe problem is logged and means "unknown".
std::vector<DeviceProperties> probe_nvidia_gpus();

// Whether argv runs a Python interpreter directly, so that a version probe
// can run with the same one: decided once, by the manifest reader's
// python_command.hpp (which also refuses a pycache command whose options
// stop bytecode).
using manifest::looks_like_python;

// Runs `<python> -c <probe>` (host/framework_probe.hpp: the script the
// runtime runs too) with the program's environment and working directory:
// the framework versions, and the site-packages directories they were found
// in (recorded with the slice, read by the installer). Failures (no such
// interpreter, timeout) give nothing and a warning in `warnings`.
struct ProbedFrameworks
{
  std::map<std::string, std::string, std::less<>> versions;
  std::vector<std::string> site_packages;
};
ProbedFrameworks probe_frameworks(const std::string& python, const Environment& environment,
                                  const std::filesystem::path& working_directory, std::vector<std::string>& warnings);

} // namespace prewarm::command
