// SPDX-License-Identifier: Apache-2.0
// The plan: jobs = target x model x precision, each with a strategy decided
// by what this host has.
//   run   a matching device is present (OpenCL enumeration): fill its caches
//   aot   an Intel target is absent but an ocloc of this host knows its device:
//         compile ahead of time (built-in models, and a command's recorded
//         programs); of the host's Intel toolchains (prewarm/aot/toolchains.hpp:
//         PREWARM_OCLOC alone, else the host's ocloc, then the Intel root's),
//         the first that knows the device serves it, and the reason says which
//   skip  neither; the reason says why and what would help
// A job on the virtual Intel device (an absent target, with an Intel root)
// also needs the helper programs it runs (HostCapabilities::
// virtual_device_missing): without them a command job is skipped and a
// built-in or recorded one is compiled ahead of time without its NEO slice,
// as the build does; the reason names what is missing and where it was
// looked for.
// Job ids are "<target>/<model>/<precision>"; jobs are sorted by id, so the
// order (and therefore sharding) does not depend on the host or the order of
// the manifest. Shard I/N (1-based) takes the jobs shard_partition.hpp gives
// it: grouped by the kind of runner they need, so that a shard runs on one
// runner, and the same partition on every host.
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"
#include "manifest/manifest.hpp"
#include "manifest/target_registry.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::manifest {

enum class Strategy { run, aot, skip };
std::string_view to_string(Strategy strategy);

// Which executor runs a job, decided here with its strategy from what the
// workload is, so that nothing later re-derives it: `prewarm build` maps each
// value to one executor (bundle_build/build_command.cpp, a table keyed by it).
//   none             skipped, or a model no executor runs
//   builtin          run, a built-in model (builtin/)
//   command          run, a command workload (command/)
//   aot              aot, a built-in model (aot/; with an Intel root, the
//                    virtual device, which also adds the target's NEO slice)
//   virtual_command  aot, a command that runs itself on a virtual Intel device
//   recorded_aot     aot, a command whose kinds name programs (aot/; with an
//                    Intel root, the virtual device too)
enum class ExecutorKind { none, builtin, command, aot, virtual_command, recorded_aot };
inline constexpr std::size_t k_executor_kinds = static_cast<std::size_t>(ExecutorKind::recorded_aot) + 1;

// One OpenCL device of this host (filled from runtime/opencl enumeration).
struct HostDevice
{
  int index = 0;           // what `--device N` selects
  std::string description; // "0: pthread-... (Portable Computing Language, ...)"
  DeviceProperties properties;
  bool is_gpu = false;
};

// Where an ocloc comes from (prewarm/aot/toolchains.hpp). Only an Intel
// root's carries a driver that can pose as an absent Intel GPU
// (prewarm/virtual_device).
enum class OclocSource { host, environment, intel_root };

// One Intel toolchain (an ocloc) of this host.
struct OclocInfo
{
  std::string path;                       // empty: not found
  std::string version;                    // "22.43.24595"
  std::vector<std::string> known_devices; // acronyms `ocloc ids` accepts
  std::string origin = "host";            // "host", "PREWARM_OCLOC", "Intel root /var/cache/prewarm/intel-sid"
  OclocSource source = OclocSource::host; // what the plan asks; `origin` is for people
  bool knows(std::string_view device) const;
  std::string describe() const;           // "ocloc 22.43.24595 (host)"
};

// What this build host can do; probe_host_capabilities() (prewarm/bundle_build)
// fills it, tests build it by hand.
struct HostCapabilities
{
  std::vector<HostDevice> devices;
  std::string devices_error; // why enumeration failed ("no OpenCL platform ..."), empty if it worked
  std::vector<OclocInfo> oclocs; // in precedence order (prewarm/aot/toolchains.hpp)
  // The helper programs a job on the virtual Intel device runs that this
  // host lacks, each saying where it was looked for (prewarm/virtual_device:
  // missing_build_helpers, through the function the build's executors locate
  // them with); empty: all there, or no Intel root. A job that needs one
  // names it.
  std::vector<std::string> virtual_device_missing;
  // The first toolchain that knows `device`; null when none does.
  const OclocInfo* ocloc_for(std::string_view device) const;
};

struct TargetAssessment
{
  Strategy strategy = Strategy::skip;
  std::string reason;                    // run: the device; aot: the ocloc device; skip: why + hint
  std::optional<HostDevice> device;      // run only
};

TargetAssessment assess_target(const Target& target, const HostCapabilities& host);

// Whether a command workload names the kind the OpenCL layer serves
// (programs; bundle/cache_kind.cpp: served_by_opencl_layer): its OpenCL programs
// are recorded by the layer, so an absent Intel target gets them compiled
// ahead of time (strategy aot) instead of a skip. Only when named: an empty
// kinds list (every kind) keeps the skip, so adding AOT is a choice.
bool records_programs(const ModelSpec& model);

// Whether a command workload runs itself on a virtual Intel device for an
// absent Intel target (prewarm/virtual_device/virtual_command.hpp): its kinds
// name one that Intel's runtimes write (neo, sycl: the rows' written_by), and
// not the layer's (only when named, as with programs).
bool runs_on_virtual_device(const ModelSpec& model);

struct Job
{
  std::string id; // "cpu/qwen2.5-0.5b/fp32"
  std::string target;
  std::string model;
  model::Precision precision = model::Precision::fp32;
  // False for a command workload that never names "{precision}": one job per
  // target, id "TARGET/MODEL", and `precision` means nothing.
  bool has_precision = true;
  Strategy strategy = Strategy::skip;
  std::string reason;
  std::optional<HostDevice> device; // strategy run
  std::string runner;               // the CI runner kind it needs (shard_partition.hpp)
  ExecutorKind executor = ExecutorKind::none;
};

struct Shard
{
  int index = 1; // 1-based
  int count = 1;
  // "I/N" with 1 <= I <= N.
  static Result<Shard> parse(std::string_view text);
  std::string to_string() const;
};

struct Plan
{
  Shard shard;
  std::size_t total_jobs = 0; // before sharding
  std::vector<Job> jobs;      // this shard's jobs, sorted by id
  std::size_t count(Strategy strategy) const;
};

// Errc::usage when the shard count cannot keep each shard on one runner
// (shard_partition.hpp).
Result<Plan> make_plan(const Manifest& manifest,
                       const TargetRegistry& registry,
                       const HostCapabilities& host,
                       Shard shard = {});

} // namespace prewarm::manifest
