// SPDX-License-Identifier: Apache-2.0
#include "command/kind_builder_rules.hpp"

#include "base/encoding.hpp"
#include "jobs/slice_identity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>

namespace prewarm::command {

namespace {

using bundle::CacheKind;
using bundle::Requirement;

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


std::vector<const DeviceProperties*>
nvidia_gpus(const IdentityFacts& facts)
{
  std::vector<const DeviceProperties*> nvidia;
  for (const auto& d : facts.nvidia_gpus) {
    nvidia.push_back(&d);
  }
  return nvidia;
}

// --- Requirements: what a slice of the kind needs of the installing host.

void
require_cuda(KindIdentity& identity, const IdentityFacts& facts, FrameworkRequirements /*frameworks*/)
{
  const std::string what_for(to_string(identity.kind));
  const auto nvidia = nvidia_gpus(facts);
  // The ComputeCache is invalidated by any driver change, and in a container
  // the driver is the host's: the strongest check a slice can make.
  require_values(identity.requirements, identity.warnings, nvidia, prop::nvidia_driver, what_for);
  require_values(identity.requirements, identity.warnings, nvidia, prop::nvidia_sm, what_for);
}

void
require_torch(KindIdentity& identity, const IdentityFacts& facts, FrameworkRequirements frameworks)
{
  if (frameworks == FrameworkRequirements::required) {
    require_frameworks(identity, facts);
  }
  if (const auto nvidia = nvidia_gpus(facts); !nvidia.empty()) {
    // A cubin is for one SM; Inductor's key holds the device name too.
    require_values(identity.requirements, identity.warnings, nvidia, prop::nvidia_sm, to_string(identity.kind));
  }
}

void
require_pycache(KindIdentity& identity, const IdentityFacts& facts, FrameworkRequirements frameworks)
{
  // Bytecode depends on the Python version only (its magic number and the
  // cpython-3XY in each name); no device, no framework.
  if (frameworks != FrameworkRequirements::required) {
    return;
  }
  if (const auto it = facts.frameworks.find("framework.python"); it != facts.frameworks.end()) {
    identity.requirements.push_back(Requirement{"framework.python", "==", it->second});
  } else {
    identity.warnings.push_back("pycache: no Python version known (the command is not a Python interpreter, "
                                "or the probe failed); the slice does not check it (Python itself ignores "
                                "bytecode of another version)");
  }
}

void
require_pocl(KindIdentity& identity, const IdentityFacts& facts, FrameworkRequirements /*frameworks*/)
{
  const auto devices = select_devices(facts.opencl_devices, is_pocl);
  if (devices.empty()) {
    identity.warnings.push_back("pocl: no PoCL device on the build host; the slice does not check "
                                "the PoCL build or device");
    return;
  }
  // The built-in executor's keys for a PoCL device (jobs/slice_identity.hpp),
  // so command and built-in caches of one device share a slice.
  for (const auto key : jobs::pocl_requirement_keys()) {
    require_values(identity.requirements, identity.warnings, devices, key, to_string(identity.kind));
  }
}

void
require_intel_gpu(KindIdentity& identity, const IdentityFacts& facts, FrameworkRequirements /*frameworks*/)
{
  const std::string what_for(to_string(identity.kind));
  const auto devices = select_devices(facts.opencl_devices, is_intel_gpu);
  if (devices.empty()) {
    identity.warnings.push_back(fmt::format(
      "{}: no Intel GPU with a PCI id on the build host; the slice does not check device or driver", what_for));
    return;
  }
  // NEO hashes the PCI device id and revision and the IGC build; SYCL the
  // device name and driver version string.
  require_values(identity.requirements, identity.warnings, devices, prop::pci_id, what_for);
  const bool knows_neo_version =
    std::any_of(devices.begin(), devices.end(), [](const auto* d) { return d->contains(prop::intel_driver); });
  std::vector<bundle::Requirement> driver;
  require_values(driver, identity.warnings, devices, knows_neo_version ? prop::intel_driver : prop::opencl_driver,
                 what_for);
  for (auto& requirement : driver) {
    // One NEO release, as the virtual device's slices require it: a host
    // that reaches NEO through Level Zero only reports it as 1.3.<build>.
    if (knows_neo_version && requirement.op == "==") {
      requirement = jobs::intel_driver_requirement(requirement.value);
    }
    identity.requirements.push_back(std::move(requirement));
  }
  if (identity.kind == CacheKind::sycl) {
    require_values(identity.requirements, identity.warnings, devices, prop::opencl_device, what_for);
  }
}

void
require_programs(KindIdentity& identity, const IdentityFacts& facts, FrameworkRequirements /*frameworks*/)
{
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
    return;
  }
  for (const auto key : {prop::vendor, prop::opencl_platform_version, prop::opencl_device,
                         prop::opencl_device_version, prop::opencl_driver}) {
    require_values(identity.requirements, identity.warnings, devices, key, to_string(identity.kind));
  }
}

// --- Capture traps: variables that make the capture miss or stay empty.

const std::string*
value_of(const Environment& environment, std::string_view name)
{
  const auto it = environment.find(name);
  return it == environment.end() ? nullptr : &it->second;
}

void
neo_traps(const Environment& environment, CacheKind /*kind*/, std::vector<std::string>& traps)
{
  for (const auto& [name, value] : environment) {
    if (name.starts_with("IGC_")) {
      traps.push_back(fmt::format(
        "{} is set: Intel compute-runtime 25.31 to 26.31 turns its compiler cache off when any "
        "IGC_* variable is set, so neo stays empty on those drivers (unset it for the warm-up and "
        "in the application)",
        name));
    }
  }
}

void
pocl_traps(const Environment& environment, CacheKind /*kind*/, std::vector<std::string>& traps)
{
  if (const auto* v = value_of(environment, "POCL_KERNEL_CACHE"); v != nullptr && *v == "0") {
    traps.push_back("POCL_KERNEL_CACHE=0: PoCL deletes its cache files when a program is "
                    "released, so pocl stays empty");
  }
  for (const std::string_view name : {"POCL_WORK_GROUP_METHOD", "POCL_CPU_JIT"}) {
    if (const auto* v = value_of(environment, name); v != nullptr) {
      traps.push_back(fmt::format("{}={} is part of PoCL's cache key: the application must run "
                                  "with the same value to hit the captured cache",
                                  name, in_quotes(*v)));
    }
  }
}

void
triton_traps(const Environment& environment, CacheKind /*kind*/, std::vector<std::string>& traps)
{
  for (const std::string_view name : {"TRITON_CACHE_MANAGER", "TRITON_REMOTE_CACHE_BACKEND"}) {
    if (value_of(environment, name) != nullptr) {
      traps.push_back(
        fmt::format("{} is set: a custom Triton cache decides where kernels go; triton may stay empty", name));
    }
  }
  if (const auto* v = value_of(environment, "TRITON_ALWAYS_COMPILE"); v != nullptr && *v == "1") {
    traps.push_back("TRITON_ALWAYS_COMPILE=1: Triton recompiles every kernel even with a warm "
                    "cache; unset it where the bundle is used");
  }
}

void
inductor_traps(const Environment& environment, CacheKind kind, std::vector<std::string>& traps)
{
  if (const auto* v = value_of(environment, "TORCHINDUCTOR_FORCE_DISABLE_CACHES"); v != nullptr && *v == "1") {
    traps.push_back(fmt::format("TORCHINDUCTOR_FORCE_DISABLE_CACHES=1: Inductor caches are off, so {} "
                                "stays empty",
                                to_string(kind)));
  }
}

void
pycache_traps(const Environment& environment, CacheKind /*kind*/, std::vector<std::string>& traps)
{
  if (const auto* v = value_of(environment, "PYTHONDONTWRITEBYTECODE"); v != nullptr && !v->empty()) {
    traps.push_back(fmt::format("PYTHONDONTWRITEBYTECODE={} is dropped for the capture of pycache (Python would "
                                "write no bytecode); the application may keep it: it still reads the installed "
                                "bytecode",
                                in_quotes(*v)));
  }
}

constexpr std::array<KindBuilderRules, bundle::cache_kind_count> k_builder_rules = {{
  {
    .kind = CacheKind::programs,
    .source = "the layer's records hit on the devices they were made on (runtime/layer)",
    .needs = HostFacts::opencl_devices,
    .default_capture = DefaultCapture::included,
    .capture_sets = CaptureSets::opencl_layer_recording,
    .require = require_programs,
  },
  {
    .kind = CacheKind::pocl,
    .source = "kernel-caches.md §6: PoCL's key (build, device); its switches",
    .needs = HostFacts::opencl_devices,
    .default_capture = DefaultCapture::included,
    .capture_sets = CaptureSets::variables_only,
    .require = require_pocl,
    .traps = pocl_traps,
  },
  {
    .kind = CacheKind::cuda,
    .source = "kernel-caches.md §5: the ComputeCache is invalidated by any driver change",
    .needs = HostFacts::nvidia_gpus,
    .default_capture = DefaultCapture::included,
    .capture_sets = CaptureSets::variables_only,
    .require = require_cuda,
  },
  {
    .kind = CacheKind::neo,
    .source = "kernel-caches.md §2: NEO's key (PCI id, revision, IGC); compute-runtime 25.31-26.31 and IGC_*",
    .needs = HostFacts::opencl_devices,
    .default_capture = DefaultCapture::included,
    .capture_sets = CaptureSets::variables_only,
    .require = require_intel_gpu,
    .traps = neo_traps,
  },
  {
    .kind = CacheKind::sycl,
    .source = "kernel-caches.md §4: SYCL's key (device name, driver version)",
    .needs = HostFacts::opencl_devices,
    .default_capture = DefaultCapture::included,
    .capture_sets = CaptureSets::variables_only,
    .require = require_intel_gpu,
  },
  {
    .kind = CacheKind::triton,
    .source = "kernel-caches.md §7: Triton's key (torch, Triton, SM); its cache managers",
    .needs = HostFacts::nvidia_gpus | HostFacts::frameworks,
    .default_capture = DefaultCapture::included,
    .capture_sets = CaptureSets::variables_only,
    .require = require_torch,
    .traps = triton_traps,
  },
  {
    .kind = CacheKind::inductor,
    .source = "kernel-caches.md §8: Inductor's key (torch, Triton, device)",
    .needs = HostFacts::nvidia_gpus | HostFacts::frameworks,
    .default_capture = DefaultCapture::included,
    // For the ptxas pin: its .best_config results are compiled in the
    // program's process (no precompile: nothing saved at exit).
    .capture_sets = CaptureSets::torch_capture_hook,
    .require = require_torch,
    .traps = inductor_traps,
  },
  // Opt-in: precompile changes how PyTorch runs (it drops some of Dynamo's
  // guards), and the kind holds inductor's cache.
  {
    .kind = CacheKind::dynamo,
    .source = "kernel-caches.md §8; torch 2.8-2.11: entries saved by save_cache_artifacts() only",
    .needs = HostFacts::nvidia_gpus | HostFacts::frameworks,
    .default_capture = DefaultCapture::opt_in,
    .capture_sets = CaptureSets::torch_capture_hook,
    .require = require_torch,
    .traps = inductor_traps,
  },
  // Opt-in: it is not a kernel cache, and it makes the capture write
  // bytecode the program's image may not want.
  {
    .kind = CacheKind::pycache,
    .source = "Python: .pyc names and magic number per version; PYTHONDONTWRITEBYTECODE",
    .needs = HostFacts::frameworks,
    .default_capture = DefaultCapture::opt_in,
    .capture_sets = CaptureSets::bytecode_writing,
    .require = require_pycache,
    .traps = pycache_traps,
  },
}};

// Row i is kind i: a kind without a row, or rows out of order, fails the build.
constexpr bool
every_kind_has_its_row()
{
  for (std::size_t i = 0; i < k_builder_rules.size(); ++i) {
    if (static_cast<std::size_t>(k_builder_rules[i].kind) != i || k_builder_rules[i].require == nullptr ||
        k_builder_rules[i].source.empty()) {
      return false;
    }
  }
  return true;
}
static_assert(every_kind_has_its_row(),
              "k_builder_rules needs one row per CacheKind, in declaration order, with its source");

} // namespace

const KindBuilderRules&
builder_rules_of(CacheKind kind)
{
  return k_builder_rules[static_cast<std::size_t>(kind)];
}

HostFacts
facts_needed(std::span<const CacheKind> kinds)
{
  HostFacts facts = HostFacts::none;
  for (const auto kind : kinds) {
    facts = facts | builder_rules_of(kind).needs;
  }
  return facts;
}

bool
sets_up(std::span<const CacheKind> kinds, CaptureSets what)
{
  return std::ranges::any_of(kinds, [&](CacheKind kind) { return builder_rules_of(kind).capture_sets == what; });
}

} // namespace prewarm::command
