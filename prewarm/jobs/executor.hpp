// SPDX-License-Identifier: Apache-2.0
// The seam between `prewarm build` and the code that fills caches for one job.
// Each executor implements it in its own target: builtin/ (the representative
// engine), command/ (command workloads), aot/ (ahead-of-time compilation).
// Below all of them and below bundle_build/, which runs each job on the
// executor its plan names (manifest::ExecutorKind, manifest/plan.hpp).
//
// Contract for run():
//   - write everything to package under ctx.work_dir (a fresh, private, empty
//     directory), laid out <kind>/<relative path> below each output's
//     staging_dir; nothing outside it;
//   - return the requirements each output's caches depend on (the slice
//     predicates: device, driver, compiler...), from the vocabulary in
//     base/device_properties.hpp;
//   - an error means the job failed: the builder records it, packages nothing
//     of it, and (with --keep-going) continues with the other jobs.
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "manifest/manifest.hpp"
#include "manifest/plan.hpp"
#include "manifest/target_registry.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::jobs {

struct JobContext
{
  const manifest::Manifest& manifest;
  const manifest::Job& job;
  const manifest::ModelSpec& model;
  const manifest::Target& target;
  std::filesystem::path work_dir; // private, empty, removed by the builder
  // Where the job's full output goes: kept after the build (bundle_build/job_logs.hpp).
  // Empty: `default_name` in work_dir (removed with it).
  std::filesystem::path log_file = {};

  std::filesystem::path log_file_or(std::string_view default_name) const
  {
    return log_file.empty() ? work_dir / default_name : log_file;
  }
};

// One group of cache kinds that share their requirements: one slice.
struct JobOutput
{
  std::filesystem::path staging_dir;             // holds <kind>/... (under work_dir)
  std::vector<bundle::Requirement> requirements; // what the caches are valid for
  std::vector<bundle::CustomCache> caches = {};     // custom caches under staging_dir/custom/
  std::vector<bundle::EnvSetting> environment = {}; // the model's runtime_env
  // Where the program's Python frameworks were found (framework_probe.hpp):
  // for a slice requiring framework.*, read at install.
  std::vector<std::string> site_packages = {};
};

struct JobOutcome
{
  std::vector<JobOutput> outputs;
  std::string device;          // the device that ran it ("0: pthread-... (PoCL)"), or the AOT target
  double seconds = 0;          // wall time of the job
  std::uint64_t variants = 0;  // kernel variants compiled
  std::uint64_t store_hits = 0;
  std::uint64_t store_misses = 0;
  std::string summary;         // one line for the per-job report on stderr
  std::string job_line;        // the bundle's "job" line; empty: "<job id> <strategy> <executor>"
  std::string report_json;     // the executor's full report (JSON text; may be empty)
};

class Executor
{
public:
  virtual ~Executor() = default;
  virtual std::string_view name() const = 0; // "builtin", "command", "aot"
  virtual Result<JobOutcome> run(const JobContext& context) = 0;
};

} // namespace prewarm::jobs
