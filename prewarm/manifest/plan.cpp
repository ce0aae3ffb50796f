// SPDX-License-Identifier: Apache-2.0
#include "manifest/plan.hpp"

#include "manifest/shard_partition.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

namespace prewarm::manifest {

std::string_view
to_string(Strategy strategy)
{
  switch (strategy) {
  case Strategy::run:
    return "run";
  case Strategy::aot:
    return "aot";
  case Strategy::skip:
    return "skip";
  }
  return "?";
}

bool
OclocInfo::knows(std::string_view device) const
{
  return std::find(known_devices.begin(), known_devices.end(), device) != known_devices.end();
}

std::string
OclocInfo::describe() const
{
  return fmt::format("ocloc {} ({})", version.empty() ? std::string("(unknown version)") : version, origin);
}

const OclocInfo*
HostCapabilities::ocloc_for(std::string_view device) const
{
  for (const auto& ocloc : oclocs) {
    if (ocloc.knows(device)) {
      return &ocloc;
    }
  }
  return nullptr;
}

namespace {

std::string
property(const HostDevice& device, std::string_view key)
{
  const auto it = device.properties.find(key);
  return it == device.properties.end() ? std::string() : it->second;
}

bool
lists(const std::vector<std::string>& ids, std::string_view id)
{
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::string
no_devices_note(const HostCapabilities& host)
{
  return host.devices_error.empty() ? std::string() : fmt::format("; OpenCL: {}", host.devices_error);
}

TargetAssessment
assess_cpu(const Target& target, const HostCapabilities& host)
{
  for (const auto& device : host.devices) {
    if (!device.is_gpu && property(device, prop::vendor) == "cpu") {
      return {Strategy::run, fmt::format("device {}", device.description), device};
    }
  }
  return {Strategy::skip,
          fmt::format("{}: no OpenCL CPU device on this host (install pocl-opencl-icd){}", target.name,
                      no_devices_note(host)),
          std::nullopt};
}

TargetAssessment
assess_nvidia(const Target& target, const HostCapabilities& host)
{
  const std::string wanted_sm = std::to_string(target.sm);
  const HostDevice* other = nullptr;
  for (const auto& device : host.devices) {
    if (property(device, prop::vendor) != "nvidia") {
      continue;
    }
    const std::string pci = property(device, prop::pci_id);
    // The SM decides the binary; the PCI id tells an H100 from an H200 (both
    // sm 90), so a target that lists PCI ids runs only on a device whose id
    // is known and listed: a cache made on an H100 is no H200 cache.
    const bool sm_matches = property(device, prop::nvidia_sm) == wanted_sm;
    const bool pci_matches = target.pci_ids.empty() || lists(target.pci_ids, pci);
    if (sm_matches && pci_matches) {
      return {Strategy::run, fmt::format("device {}", device.description), device};
    }
    if (sm_matches && pci.empty()) {
      return {Strategy::skip,
              fmt::format("{}: this host's NVIDIA device {} (sm {}) reports no PCI device id, so it cannot be "
                          "told from another sm {} GPU (install nvidia-smi, or make /sys/bus/pci visible)",
                          target.name, device.description, wanted_sm, wanted_sm),
              std::nullopt};
    }
    if (other == nullptr) {
      other = &device;
    }
  }
  if (other != nullptr) {
    return {Strategy::skip,
            fmt::format("{}: this host's NVIDIA device {} (sm {}, pci {}) is not {} (sm {}, pci {}) "
                        "(NVIDIA caches can only be made on the device)",
                        target.name, other->description, property(*other, prop::nvidia_sm),
                        property(*other, prop::pci_id).empty() ? "unknown" : property(*other, prop::pci_id),
                        target.name, target.sm, fmt::join(target.pci_ids, "|")),
            std::nullopt};
  }
  return {Strategy::skip,
          fmt::format("{}: no NVIDIA device on this host (NVIDIA caches can only be made on the device){}",
                      target.name, no_devices_note(host)),
          std::nullopt};
}

TargetAssessment
assess_intel(const Target& target, const HostCapabilities& host)
{
  for (const auto& device : host.devices) {
    if (device.is_gpu && property(device, prop::vendor) == "intel" &&
        lists(target.pci_ids, property(device, prop::pci_id))) {
      return {Strategy::run, fmt::format("device {}", device.description), device};
    }
  }
  if (host.oclocs.empty()) {
    return {Strategy::skip,
            fmt::format("{}: not present on this host and no ocloc found for ahead-of-time compilation "
                        "(install intel-opencl-icd, run ./setup.sh intel-root, or set PREWARM_OCLOC)",
                        target.name),
            std::nullopt};
  }
  std::vector<std::string> unknown_to; // the toolchains before the one that serves it
  for (const auto& ocloc : host.oclocs) {
    if (!ocloc.knows(target.ocloc_device)) {
      unknown_to.push_back(ocloc.describe());
      continue;
    }
    std::string why;
    if (!unknown_to.empty()) {
      why = fmt::format(": {} {} not know '{}'", fmt::join(unknown_to, " and "),
                        unknown_to.size() == 1 ? "does" : "do", target.ocloc_device);
    }
    return {Strategy::aot,
            fmt::format("{} -device {}{}{}", ocloc.describe(), target.ocloc_device,
                        target.ip_version.empty() ? std::string() : fmt::format(" (IP {})", target.ip_version), why),
            std::nullopt};
  }
  return {Strategy::skip,
          fmt::format("{}: {} {} not know '{}' (run ./setup.sh intel-root for the compute runtime 26.27 toolchain, "
                      "or install a newer intel-opencl-icd / ocloc)",
                      target.name, fmt::join(unknown_to, " and "), unknown_to.size() == 1 ? "does" : "do",
                      target.ocloc_device),
          std::nullopt};
}

// The toolchain of an Intel root (prewarm/aot/toolchains.hpp), whose driver
// can pose as an absent Intel GPU; null when none.
const OclocInfo*
intel_root_toolchain(const HostCapabilities& host)
{
  for (const auto& ocloc : host.oclocs) {
    if (ocloc.source == OclocSource::intel_root) {
      return &ocloc;
    }
  }
  return nullptr;
}

// A built-in or recorded job compiled ahead of time for an Intel target also
// gets its NEO slice from the virtual device where there is an Intel root
// (bundle_build/build_command.cpp); without the helper programs that runs
// (listed only where there is a root), the build compiles it without one,
// and the reason says so.
void
note_missing_neo_slice(Job& job, const HostCapabilities& host)
{
  if (!host.virtual_device_missing.empty()) {
    job.reason = fmt::format("{}; without its NEO slice: {}", job.reason, fmt::join(host.virtual_device_missing, "; "));
  }
}

// A command job for an absent Intel target (strategy aot so far): its
// recorded programs compiled ahead of time, the command on a virtual device,
// or a skip that says why.
void
plan_absent_intel_command(Job& job, const Target& target, const ModelSpec& model, const HostCapabilities& host)
{
  if (records_programs(model)) {
    // The command runs on this host's device with the OpenCL layer
    // recording, and ocloc compiles every program it built.
    job.reason = fmt::format("{} for the programs the command builds", job.reason);
    job.runner = std::string(k_cpu_runner); // any runner of the builder image can: no GPU
  } else if (runs_on_virtual_device(model) && intel_root_toolchain(host) != nullptr) {
    // A runner with the Intel root does it without the GPU, so CI
    // needs no self-hosted Intel runner for it.
    job.runner = std::string(k_cpu_runner);
    // The command itself runs with Intel's driver of the root posing
    // as the target; its NEO and SYCL caches become the slices.
    job.reason = fmt::format("{}: the command runs on a virtual {} ({})", target.name, target.ocloc_device,
                             intel_root_toolchain(host)->origin);
    if (!host.virtual_device_missing.empty()) {
      // The build could not run it: said here, not as a failed job.
      job.strategy = Strategy::skip;
      job.reason = fmt::format("{}; not run: {}", job.reason, fmt::join(host.virtual_device_missing, "; "));
    }
  } else {
    job.strategy = Strategy::skip;
    job.reason = fmt::format("{}: not present on this host, and a command workload runs only on the device "
                             "(built-in models compile ahead of time; a command's OpenCL programs do when "
                             "its kinds include programs; with an Intel root, a command whose kinds "
                             "name neo or sycl runs on a virtual device)",
                             target.name);
  }
}

// Called once the strategy is final (make_plan skips an aot command that
// neither records programs nor runs on a virtual device).
ExecutorKind
executor_for(Strategy strategy, const ModelSpec& model)
{
  switch (strategy) {
  case Strategy::skip:
    return ExecutorKind::none;
  case Strategy::run:
    if (model.is_builtin()) {
      return ExecutorKind::builtin;
    }
    return model.command ? ExecutorKind::command : ExecutorKind::none;
  case Strategy::aot:
    if (model.is_builtin()) {
      return ExecutorKind::aot;
    }
    if (records_programs(model)) {
      return ExecutorKind::recorded_aot;
    }
    return runs_on_virtual_device(model) ? ExecutorKind::virtual_command : ExecutorKind::none;
  }
  return ExecutorKind::none;
}

} // namespace

namespace {

bool
names_kind_where(const ModelSpec& model, bool (*pick)(const bundle::CacheKindRules&))
{
  return model.command && std::ranges::any_of(model.command->kinds,
                                              [&](bundle::CacheKind kind) { return pick(bundle::rules_of(kind)); });
}

} // namespace

bool
records_programs(const ModelSpec& model)
{
  return names_kind_where(model, [](const bundle::CacheKindRules& rules) { return rules.served_by_opencl_layer; });
}

bool
runs_on_virtual_device(const ModelSpec& model)
{
  return !records_programs(model) &&
         names_kind_where(model, [](const bundle::CacheKindRules& rules) { return rules.written_by_intel_runtime(); });
}

TargetAssessment
assess_target(const Target& target, const HostCapabilities& host)
{
  switch (target.vendor) {
  case Vendor::cpu:
    return assess_cpu(target, host);
  case Vendor::nvidia:
    return assess_nvidia(target, host);
  case Vendor::intel:
    return assess_intel(target, host);
  }
  return {Strategy::skip, "unknown vendor", std::nullopt};
}

Result<Shard>
Shard::parse(std::string_view text)
{
  const auto slash = text.find('/');
  Shard shard;
  const auto number = [](std::string_view part, int& out) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return !part.empty() && ec == std::errc() && end == part.data() + part.size();
  };
  if (slash == std::string_view::npos || !number(text.substr(0, slash), shard.index) ||
      !number(text.substr(slash + 1), shard.count) || shard.count < 1 || shard.index < 1 ||
      shard.index > shard.count) {
    return fail(Errc::usage, fmt::format("invalid shard '{}': expected I/N with 1 <= I <= N, e.g. 2/4", text));
  }
  return shard;
}

std::string
Shard::to_string() const
{
  return fmt::format("{}/{}", index, count);
}

std::size_t
Plan::count(Strategy strategy) const
{
  return static_cast<std::size_t>(
    std::count_if(jobs.begin(), jobs.end(), [&](const Job& job) { return job.strategy == strategy; }));
}

Result<Plan>
make_plan(const Manifest& manifest, const TargetRegistry& registry, const HostCapabilities& host, Shard shard)
{
  std::vector<Job> jobs;
  for (const auto& target_name : manifest.targets) {
    const Target* target = registry.find(target_name);
    if (target == nullptr) {
      // parse_manifest checked the names against a registry; a different
      // registry here is a caller mistake, reported rather than crashed on.
      return fail(Errc::usage, fmt::format("target '{}' is not in the registry {}", target_name,
                                           registry.source_name()));
    }
    const TargetAssessment assessment = assess_target(*target, host);
    for (const auto& model : manifest.models) {
      // A command that never names {precision} would run the same way once
      // per precision: it gets one job, whose id names no precision.
      const bool per_precision = !model.command || model.command->uses_precision();
      for (const auto precision : manifest.precisions) {
        if (!per_precision && precision != manifest.precisions.front()) {
          break;
        }
        Job job;
        job.target = target->name;
        job.model = model.name;
        job.precision = precision;
        job.has_precision = per_precision;
        job.id = per_precision ? fmt::format("{}/{}/{}", target->name, model.name, precision_name(precision))
                               : fmt::format("{}/{}", target->name, model.name);
        job.strategy = assessment.strategy;
        job.reason = assessment.reason;
        job.device = assessment.device;
        job.runner = runner_kind(*target, model, host.oclocs);
        if (assessment.strategy == Strategy::aot && !model.is_builtin()) {
          plan_absent_intel_command(job, *target, model, host);
        }
        if (job.strategy == Strategy::aot && !runs_on_virtual_device(model)) {
          note_missing_neo_slice(job, host);
        }
        job.executor = executor_for(job.strategy, model);
        jobs.push_back(std::move(job));
      }
    }
  }
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.id < b.id; });
  std::vector<std::string> runners;
  for (const auto& job : jobs) {
    runners.push_back(job.runner);
  }
  PW_ASSIGN(const auto owners, partition_jobs(runners, shard.count));
  Plan plan;
  plan.shard = shard;
  plan.total_jobs = jobs.size();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (owners[i] == shard.index - 1) {
      plan.jobs.push_back(std::move(jobs[i]));
    }
  }
  return plan;
}

} // namespace prewarm::manifest
