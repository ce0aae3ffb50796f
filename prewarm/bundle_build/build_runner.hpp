// SPDX-License-Identifier: Apache-2.0
// `prewarm build`: manifest -> plan -> executors -> staging -> bundle spec.
//
// Order, so that a bad input never leaves a partial bundle: the registry,
// presets and manifest are parsed and validated first, then the plan is made,
// then jobs run (up to --jobs at once), each in its own private work
// directory. A failed job's files are never packaged. Successful outputs are
// merged, in job id order, into one staging directory per slice (target
// identity, jobs/slice_identity.hpp). The caller (bundle_build/build_command.hpp)
// signs and writes the bundle from the returned spec (pack/bundle_writer.hpp)
// while the staging directory is alive.
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"
#include "bundle_build/bundle_header.hpp"
#include "bundle_build/progress_board.hpp"
#include "jobs/executor.hpp"
#include "manifest/manifest.hpp"
#include "manifest/plan.hpp"
#include "pack/bundle_writer.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::bundle_build {

enum class FailurePolicy { stop, keep_going };

struct BuildOptions
{
  std::optional<std::filesystem::path> manifest_file; // empty: the embedded default
  std::optional<std::filesystem::path> targets_file;  // empty: the embedded registry
  manifest::Shard shard;
  int parallel_jobs = 1;
  FailurePolicy on_failure = FailurePolicy::stop;
  std::optional<std::string> channel;  // overrides bundle.channel (bundle_build/bundle_header.hpp)
  std::optional<std::uint64_t> serial; // overrides bundle.serial
  std::optional<std::filesystem::path> log_dir; // jobs' full logs kept here (bundle_build/job_logs.hpp)
  ProgressOptions progress;            // stderr progress while jobs run (default off)
};

// Everything `prewarm build` needs before running a job; loading it is the
// validation step (exit 2 on any manifest or registry error).
struct BuildInputs
{
  manifest::TargetRegistry registry;
  manifest::PresetLibrary presets;
  manifest::Manifest manifest;
};
Result<BuildInputs> load_build_inputs(const BuildOptions& options);

enum class JobState { succeeded, failed, skipped, not_run };
std::string_view to_string(JobState state);

struct JobRecord
{
  manifest::Job job;
  JobState state = JobState::not_run;
  std::string executor;
  std::string error; // failed: why
  jobs::JobOutcome outcome;
  std::vector<std::string> slice_ids;
};

// The executor of each manifest::ExecutorKind, indexed by it: the plan names
// the kind per job, and that slot runs it. An empty slot: no executor of this
// build runs such jobs (a virtual command without an Intel root), which then
// fail, saying so.
struct ExecutorTable
{
  std::array<std::unique_ptr<jobs::Executor>, manifest::k_executor_kinds> slots;

  std::unique_ptr<jobs::Executor>& operator[](manifest::ExecutorKind kind)
  {
    return slots[static_cast<std::size_t>(kind)];
  }
};

struct BuildResult
{
  manifest::Plan plan;
  std::vector<JobRecord> records; // plan order (sorted by job id)
  std::unique_ptr<TempDir> staging;
  pack::BundleSpec spec;          // slices point into `staging`
  std::size_t failed = 0;
  FailurePolicy on_failure = FailurePolicy::stop;

  // Under FailurePolicy::stop with a failed job: why the build stops (the
  // first failed job and its error); the spec is then empty.
  std::optional<std::string> stop_error() const;
  std::string summary() const;    // "8 jobs: 2 run, 4 aot, 2 skipped; 0 failed; 3 slices"
  std::string to_json() const;    // per-job report for --json
};

// Runs the plan's jobs on the one job pool (jobs/job_pool.hpp); the bundle's
// header was decided before (bundle_build/bundle_header.hpp). Errors: interruption
// or staging I/O. A failed job is recorded in the result (result.failed):
// with keep_going the rest is packaged; with stop nothing is (the spec is
// empty and stop_error() says why), so that the caller can still write the
// --json report before failing the build.
Result<BuildResult> run_build(const BuildOptions& options,
                              const BuildInputs& inputs,
                              const BundleHeader& header,
                              const manifest::HostCapabilities& host,
                              ExecutorTable& executors);

} // namespace prewarm::bundle_build
