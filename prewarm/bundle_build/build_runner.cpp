// SPDX-License-Identifier: Apache-2.0
#include "bundle_build/build_runner.hpp"
#include "pack/slice_extras.hpp"

#include "aot/shared_ocloc_runs.hpp"
#include "base/json_schema.hpp"
#include "base/log.hpp"
#include "base/time_format.hpp"
#include "bundle_build/job_logs.hpp"
#include "jobs/interruption.hpp"
#include "jobs/job_pool.hpp"
#include "jobs/slice_identity.hpp"
#include "jobs/staged_output.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

namespace prewarm::bundle_build {

std::string_view
to_string(JobState state)
{
  switch (state) {
  case JobState::succeeded:
    return "ok";
  case JobState::failed:
    return "failed";
  case JobState::skipped:
    return "skipped";
  case JobState::not_run:
    return "not run";
  }
  return "?";
}

Result<BuildInputs>
load_build_inputs(const BuildOptions& options)
{
  PW_ASSIGN(auto registry, options.targets_file ? manifest::TargetRegistry::load_file(*options.targets_file)
                                                : manifest::TargetRegistry::embedded());
  PW_ASSIGN(auto presets, manifest::PresetLibrary::embedded());
  const manifest::ManifestInputs inputs{registry, presets};
  PW_ASSIGN(auto parsed, options.manifest_file ? manifest::load_manifest_file(*options.manifest_file, inputs)
                                               : manifest::load_default_manifest(inputs));
  return BuildInputs{std::move(registry), std::move(presets), std::move(parsed)};
}

namespace {

std::string
safe_directory_name(std::size_t index, std::string_view job_id)
{
  std::string name = fmt::format("{:04}-", index);
  for (char c : job_id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
    name += ok ? c : '_';
  }
  return name;
}

Status
make_directory(const std::filesystem::path& dir)
{
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  }
  return {};
}

std::string
job_report_line(const JobRecord& record, std::size_t position, std::size_t total)
{
  const auto& job = record.job;
  switch (record.state) {
  case JobState::succeeded:
    return fmt::format("[{}/{}] ok      {} ({} on {}) {:.1f} s: {}", position, total, job.id,
                       manifest::to_string(job.strategy), record.outcome.device, record.outcome.seconds,
                       record.outcome.summary);
  case JobState::failed:
    return fmt::format("[{}/{}] FAILED  {} ({}): {}", position, total, job.id, manifest::to_string(job.strategy),
                       record.error);
  case JobState::skipped:
    return fmt::format("[{}/{}] skip    {}: {}", position, total, job.id, job.reason);
  case JobState::not_run:
    return fmt::format("[{}/{}] not run {} (an earlier job failed; --keep-going runs the rest)", position, total,
                       job.id);
  }
  return {};
}

} // namespace

std::optional<std::string>
BuildResult::stop_error() const
{
  if (on_failure != FailurePolicy::stop) {
    return std::nullopt;
  }
  const auto failed_job =
    std::find_if(records.begin(), records.end(), [](const JobRecord& r) { return r.state == JobState::failed; });
  if (failed_job == records.end()) {
    return std::nullopt;
  }
  return fmt::format("job {} failed: {} (no bundle written; --keep-going packages the other jobs)",
                     failed_job->job.id, failed_job->error);
}

std::string
BuildResult::summary() const
{
  std::size_t ok = 0;
  std::size_t skipped = 0;
  std::size_t not_run = 0;
  for (const auto& r : records) {
    ok += r.state == JobState::succeeded ? 1 : 0;
    skipped += r.state == JobState::skipped ? 1 : 0;
    not_run += r.state == JobState::not_run ? 1 : 0;
  }
  return fmt::format("{} jobs (shard {} of {} in all): {} ok ({} run, {} aot), {} skipped, {} failed{}; {} slices",
                     records.size(), plan.shard.to_string(), plan.total_jobs, ok,
                     std::count_if(records.begin(), records.end(),
                                   [](const JobRecord& r) {
                                     return r.state == JobState::succeeded &&
                                            r.job.strategy == manifest::Strategy::run;
                                   }),
                     std::count_if(records.begin(), records.end(),
                                   [](const JobRecord& r) {
                                     return r.state == JobState::succeeded &&
                                            r.job.strategy == manifest::Strategy::aot;
                                   }),
                     skipped, failed, not_run > 0 ? fmt::format(", {} not run", not_run) : std::string(),
                     spec.slices.size());
}

std::string
BuildResult::to_json() const
{
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& r : records) {
    nlohmann::json job{{"id", r.job.id},
                       {"target", r.job.target},
                       {"model", r.job.model},
                       {"precision", r.job.has_precision ? nlohmann::json(manifest::precision_name(r.job.precision)) : nlohmann::json()},
                       {"strategy", manifest::to_string(r.job.strategy)},
                       {"reason", r.job.reason},
                       {"state", to_string(r.state)},
                       {"executor", r.executor},
                       {"slices", r.slice_ids}};
    if (r.state == JobState::failed) {
      job["error"] = r.error;
    }
    if (r.state == JobState::succeeded) {
      job["device"] = r.outcome.device;
      job["seconds"] = r.outcome.seconds;
      job["variants"] = r.outcome.variants;
      job["store_hits"] = r.outcome.store_hits;
      job["store_misses"] = r.outcome.store_misses;
      if (!r.outcome.report_json.empty()) {
        job["report"] = nlohmann::json::parse(r.outcome.report_json, nullptr, false);
      }
    }
    jobs.push_back(std::move(job));
  }
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& s : spec.slices) {
    nlohmann::json requirements = nlohmann::json::array();
    for (const auto& q : s.requirements) {
      requirements.push_back(fmt::format("{} {} {}", q.key, q.op, q.value));
    }
    slices.push_back({{"id", s.id}, {"requirements", requirements}, {"jobs", s.jobs}});
  }
  return nlohmann::json{{k_json_schema_version_key, k_json_schema_version},
                        {"shard", plan.shard.to_string()},
                        {"total_jobs", plan.total_jobs},
                        {"failed", failed},
                        {"jobs", jobs},
                        {"slices", slices}}
    .dump(2);
}

namespace {

// One record per planned job, and the executor that runs each: the one of
// the kind its plan names (null: this build has none, which fails that job).
std::vector<jobs::Executor*>
assign_executors(BuildResult& result, ExecutorTable& executors)
{
  for (const auto& job : result.plan.jobs) {
    JobRecord record;
    record.job = job;
    record.state = job.strategy == manifest::Strategy::skip ? JobState::skipped : JobState::not_run;
    result.records.push_back(std::move(record));
  }
  std::vector<jobs::Executor*> chosen(result.records.size(), nullptr);
  for (std::size_t i = 0; i < result.records.size(); ++i) {
    auto& record = result.records[i];
    if (record.state == JobState::skipped) {
      log::info("{}", job_report_line(record, i + 1, result.records.size()));
      continue;
    }
    if (auto* executor = executors[record.job.executor].get()) {
      chosen[i] = executor;
      record.executor = std::string(executor->name());
    }
  }
  return chosen;
}

// What the jobs share while they run: the pool's threads report through it.
struct JobRun
{
  JobRun(const BuildOptions& options_, const BuildInputs& inputs_, const std::filesystem::path& root_,
         BuildResult& result_, const std::vector<jobs::Executor*>& chosen_, ProgressBoard& progress_)
    : options(options_), inputs(inputs_), root(root_), result(result_), chosen(chosen_), progress(progress_)
  {
  }

  const BuildOptions& options;
  const BuildInputs& inputs;
  const std::filesystem::path& root; // the staging directory
  BuildResult& result;
  const std::vector<jobs::Executor*>& chosen;
  ProgressBoard& progress;
  std::mutex report_mutex;
  std::atomic<bool> stop{false};
};

// Runs job i in its own work directory (and kept log), with its executor.
Result<jobs::JobOutcome>
run_job(JobRun& run, std::size_t i, std::filesystem::path& log_file)
{
  const auto& record = run.result.records[i];
  const auto* model = run.inputs.manifest.find_model(record.job.model);
  const auto* target = run.inputs.registry.find(record.job.target);
  if (run.chosen[i] == nullptr) {
    return fail(Errc::failed, fmt::format("no executor for a {} job of a {} model in this build",
                                          manifest::to_string(record.job.strategy),
                                          model->is_builtin() ? "built-in" : "command"));
  }
  const auto work_dir = run.root / "jobs" / safe_directory_name(i, record.job.id);
  jobs::JobContext context{run.inputs.manifest, record.job, *model, *target, work_dir, {}};
  if (run.options.log_dir) {
    context.log_file = log_file = job_log_path(*run.options.log_dir, record.job.id);
  }
  PW_TRY(make_directory(work_dir));
  if (run.options.log_dir) {
    PW_TRY(prepare_job_log(context.log_file));
  }
  run.progress.job_started(i, record.job.id,
                           fmt::format("{} ({})", manifest::to_string(record.job.strategy), record.job.reason),
                           context.log_file);
  auto outcome = run.chosen[i]->run(context);
  run.progress.job_finished(i);
  return outcome;
}

void
record_outcome(JobRun& run, std::size_t i, Result<jobs::JobOutcome> outcome, const std::filesystem::path& log_file)
{
  std::lock_guard lock(run.report_mutex);
  auto& record = run.result.records[i];
  if (outcome) {
    record.state = JobState::succeeded;
    record.outcome = std::move(*outcome);
  } else {
    record.state = JobState::failed;
    record.error = outcome.error().message();
    if (run.options.on_failure == FailurePolicy::stop) {
      run.stop.store(true);
    }
  }
  const auto line = job_report_line(record, i + 1, run.result.records.size());
  if (!log_file.empty()) {
    append_to_job_log(log_file, fmt::format("{}: {}\n", log::program_name(), line));
  }
  log::info("{}", line);
}

// Runs the jobs that are not skipped, up to --jobs at once, on the one pool;
// no job starts after an interruption, or after a failure under stop.
void
run_jobs(JobRun& run)
{
  std::vector<std::size_t> runnable;
  for (std::size_t i = 0; i < run.result.records.size(); ++i) {
    if (run.result.records[i].state != JobState::skipped) {
      runnable.push_back(i);
    }
  }
  // --jobs is the budget of the build's jobs and their compiles together
  // (jobs/job_pool.hpp): a job's compiles take the slots no job holds.
  const auto budget = static_cast<unsigned>(std::max(1, run.options.parallel_jobs));
  const jobs::SharedSlots slots(budget);
  // Jobs that ask ocloc for the same input (two models of one architecture,
  // targets of one device) share one run (aot/shared_ocloc_runs.hpp).
  const aot::SharedOclocRuns ocloc_runs;
  jobs::for_each_job(
    runnable.size(), budget,
    [&](std::size_t n) {
      std::filesystem::path log_file; // kept log (options.log_dir)
      auto outcome = run_job(run, runnable[n], log_file);
      record_outcome(run, runnable[n], std::move(outcome), log_file);
    },
    [&] { return run.stop.load() || jobs::interruption_signal() != 0; });
  if (const auto counts = ocloc_runs.counts(); counts.asked > 0) {
    log::info("ocloc: {} runs for {} requests of the jobs (the others had the input of an earlier run)", counts.ran,
              counts.asked);
  }
}

// Merges the successful jobs' outputs into slices, in job id order.
Result<std::map<std::string, pack::SliceInput>>
collect_slices(std::vector<JobRecord>& records, const std::filesystem::path& root)
{
  std::map<std::string, pack::SliceInput> slices;
  for (auto& record : records) {
    if (record.state != JobState::succeeded) {
      continue;
    }
    for (const auto& output : record.outcome.outputs) {
      auto requirements = output.requirements;
      std::sort(requirements.begin(), requirements.end());
      const auto id = jobs::slice_id(record.job.target, requirements);
      auto [it, inserted] = slices.try_emplace(id);
      auto& slice = it->second;
      if (inserted) {
        slice.id = id;
        slice.staging_dir = root / "slices" / id;
        slice.requirements = requirements;
        PW_TRY(make_directory(slice.staging_dir));
      }
      PW_ASSIGN(const auto differing, jobs::merge_staged_tree(output.staging_dir, slice.staging_dir, record.job.id));
      if (differing > 0) {
        log::verbose("{}: {} cache files were already in slice {} with other bytes (same key; kept the first)",
                     record.job.id, differing, id);
      }
      const auto line = record.outcome.job_line.empty()
                          ? fmt::format("{} {} {}", record.job.id, manifest::to_string(record.job.strategy),
                                        record.executor)
                          : record.outcome.job_line;
      PW_TRY(pack::join_slice_extras(slice, output.caches, output.environment, record.job.id));
      if (std::find(slice.jobs.begin(), slice.jobs.end(), line) == slice.jobs.end()) {
        slice.jobs.push_back(line);
      }
      for (const auto& path : output.site_packages) {
        if (std::find(slice.site_packages.begin(), slice.site_packages.end(), path) == slice.site_packages.end()) {
          slice.site_packages.push_back(path);
        }
      }
      if (std::find(record.slice_ids.begin(), record.slice_ids.end(), id) == record.slice_ids.end()) {
        record.slice_ids.push_back(id);
      }
    }
  }
  return slices;
}

} // namespace

Result<BuildResult>
run_build(const BuildOptions& options,
          const BuildInputs& inputs,
          const BundleHeader& header,
          const manifest::HostCapabilities& host,
          ExecutorTable& executors)
{
  BuildResult result;
  result.on_failure = options.on_failure;
  PW_ASSIGN(result.plan, manifest::make_plan(inputs.manifest, inputs.registry, host, options.shard));
  PW_ASSIGN(auto staging, TempDir::create("prewarm-build-"));
  result.staging = std::make_unique<TempDir>(std::move(staging));
  const auto root = result.staging->path();
  const auto chosen = assign_executors(result, executors);
  {
    ProgressBoard progress(options.progress); // its live lines are erased before the summary
    JobRun run(options, inputs, root, result, chosen, progress);
    run_jobs(run);
  }

  if (jobs::interruption_signal() != 0) {
    // Nothing packaged; the staging directory goes with `result`.
    return fail(jobs::interrupted_error("prewarm build"));
  }
  for (const auto& record : result.records) {
    result.failed += record.state == JobState::failed ? 1 : 0;
  }
  if (result.failed > 0 && options.on_failure == FailurePolicy::stop) {
    // Nothing to package, but the records stand: the caller writes the
    // --json report (which job failed and why) before failing the build.
    return result;
  }

  PW_ASSIGN(auto slices, collect_slices(result.records, root));
  auto& spec = result.spec;
  spec.channel = header.channel;
  spec.serial = header.serial.value;
  spec.issued_at = header.issued_at;
  spec.expires = header.expires;
  spec.archive_mtime = header.source_date_epoch;
  spec.build_manifest_sha256 = inputs.manifest.bytes_sha256;
  for (auto& [id, slice] : slices) {
    std::sort(slice.jobs.begin(), slice.jobs.end());
    spec.slices.push_back(std::move(slice));
  }
  return result;
}

} // namespace prewarm::bundle_build
