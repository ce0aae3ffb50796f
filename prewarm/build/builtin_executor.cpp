// SPDX-License-Identifier: Apache-2.0
#include "build/builtin_executor.hpp"

#include "base/files.hpp"
#include "base/log.hpp"
#include "build/child_process.hpp"
#include "build/job_spec.hpp"
#include "build/slice_identity.hpp"
#include "bundle/cache_kind.hpp"
#include "jobs/staged_kind.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace prewarm::build {
namespace {

// The caches a built-in job can fill on each vendor's device.
std::vector<bundle::CacheKind>
kinds_for(manifest::Vendor vendor)
{
  switch (vendor) {
  case manifest::Vendor::cpu:
    return {bundle::CacheKind::programs, bundle::CacheKind::pocl};
  case manifest::Vendor::nvidia:
    return {bundle::CacheKind::programs, bundle::CacheKind::cuda};
  case manifest::Vendor::intel:
    return {bundle::CacheKind::programs, bundle::CacheKind::neo};
  }
  return {bundle::CacheKind::programs};
}

// Counts regular files below `dir`; removes kind directories left empty so
// the slice holds only what a job wrote.
std::uint64_t
prune_empty_kinds(const std::filesystem::path& staging)
{
  std::uint64_t files = 0;
  std::error_code ec;
  for (const auto& kind_dir : std::filesystem::directory_iterator(staging, ec)) {
    std::uint64_t in_kind = 0;
    for (auto it = std::filesystem::recursive_directory_iterator(kind_dir.path(), ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) {
        ++in_kind;
      }
    }
    if (in_kind == 0) {
      (void)remove_tree(kind_dir.path());
    }
    files += in_kind;
  }
  return files;
}

// A value from the engine's report (engine::to_json) by JSON pointer; the
// fallback when absent or of another type, so a report from a newer engine
// still packages.
template<typename T>
T
json_at(const nlohmann::json& json, const char* pointer, T fallback)
{
  try {
    return json.at(nlohmann::json::json_pointer(pointer)).get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

} // namespace

Result<BuiltinJobSpec>
builtin_job_spec(const JobContext& context, const std::filesystem::path& staging,
                 const std::filesystem::path& report_file)
{
  const auto& job = context.job;
  if (!job.device) {
    return fail(Errc::internal, fmt::format("{}: a run job without a device", job.id));
  }
  if (!context.model.architecture) {
    return fail(Errc::internal, fmt::format("{}: a built-in job without an architecture", job.id));
  }
  BuiltinJobSpec spec;
  spec.job_id = job.id;
  spec.target = job.target;
  spec.model_name = job.model;
  spec.manifest_source = context.manifest.source_name;
  spec.manifest_sha256 = context.manifest.bytes_sha256;
  spec.model = *context.model.architecture;
  spec.precision = job.precision;
  spec.shapes = context.manifest.shapes;
  spec.coverage = context.manifest.coverage;
  spec.device_selector = std::to_string(job.device->index);
  spec.device_description = job.device->description;
  spec.report_file = report_file;
  for (const auto kind : kinds_for(context.target.vendor)) {
    // PoCL compiles from "<POCL_CACHE_DIR>/tempfile_XXXXXX.cl" and that path
    // ends up in the cached program.bc and program binaries: a relative cache
    // directory (the child runs in `staging`) and deterministic temporary
    // names (deterministic_tempnames.cpp) make them the same in every build.
    const auto name = std::filesystem::path(bundle::to_string(kind));
    spec.caches.push_back({kind, kind == bundle::CacheKind::pocl ? name : staging / name});
  }
  return spec;
}

bool
BuiltinExecutor::handles(const manifest::Job& job, const manifest::ModelSpec& model) const
{
  return job.strategy == manifest::Strategy::run && model.is_builtin();
}

Result<JobOutcome>
BuiltinExecutor::run(const JobContext& context)
{
  const auto& job = context.job;
  const auto staging = context.work_dir / "staging";
  const auto report_file = context.work_dir / "report.json";
  PW_ASSIGN(const auto job_spec, builtin_job_spec(context, staging, report_file));
  for (const auto& cache : job_spec.caches) {
    const auto dir = staging / std::string(bundle::to_string(cache.kind));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return fail(Errc::failed, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
    }
  }
  const auto spec_file = context.work_dir / "job-spec.json";
  PW_TRY_CTX(fmt::format("{}: writing the job spec", job.id),
             write_file_atomic(spec_file.string(), to_json_text(job_spec), 0600, Durability::none));

  Environment env = process::inherited_environment();
  env["PREWARM_DETERMINISTIC_TEMPNAMES"] = "1";
  ChildSpec spec;
  spec.argv = {m_options.executable.string(), "run-job", "--spec", spec_file.string()};
  spec.environment = std::move(env);
  spec.log_file = context.log_file_or("job.log");
  spec.working_directory = staging;
  spec.timeout = m_options.timeout;
  log::verbose("{}: {}", job.id, fmt::join(spec.argv, " "));
  PW_ASSIGN(const auto child, run_child(spec));
  if (child.exit_code != 0 || child.timed_out) {
    return fail(Errc::failed, fmt::format("{}: the job {} after {:.1f} s; full log: {}; its output ends with:\n{}",
                                          job.id, child.describe(), child.seconds, spec.log_file.string(),
                                          file_tail(spec.log_file)));
  }
  PW_ASSIGN_CTX(const auto report_text, fmt::format("{}: reading the job report", job.id),
                read_file(report_file.string(), 64 << 20));
  const auto report = nlohmann::json::parse(report_text, nullptr, false);
  if (report.is_discarded() || !report.is_object()) {
    return fail(Errc::failed, fmt::format("{}: the job report {} is not a JSON object", job.id, report_file.string()));
  }

  // The child selected the device by index; make sure it is the device the
  // plan (and so the slice's requirements) is about.
  const auto& planned = job.device->properties;
  const auto planned_name = planned.find(prop::opencl_device);
  const auto reported_name = json_at<std::string>(report, "/device/properties/opencl.device", "");
  if (planned_name != planned.end() && !reported_name.empty() && reported_name != planned_name->second) {
    return fail(Errc::failed, fmt::format("{}: the job ran on '{}', the plan expected '{}'", job.id, reported_name,
                                          planned_name->second));
  }

  JobOutcome outcome;
  outcome.device = job.device->description;
  outcome.seconds = child.seconds;
  if (const auto variants = report.find("variants"); variants != report.end() && variants->is_array()) {
    outcome.variants = variants->size();
  }
  outcome.store_hits = json_at<std::uint64_t>(report, "/program_store/hits", 0);
  outcome.store_misses = json_at<std::uint64_t>(report, "/program_store/misses", 0);
  outcome.report_json = report.dump();
  for (const auto& cache : job_spec.caches) {
    const auto kind = cache.kind;
    PW_ASSIGN(const auto cleaned, jobs::clean_staged_kind(kind, staging / std::string(bundle::to_string(kind))));
    for (const auto& warning : cleaned.warnings) {
      log::warn("{}: {}", job.id, warning);
    }
  }
  const std::uint64_t files = prune_empty_kinds(staging);
  outcome.summary = fmt::format("{} variants, compile {:.2f} s, execute {:.2f} s, max error {:.2g}, {} cache files",
                                outcome.variants, json_at<double>(report, "/seconds/compile", 0.0),
                                json_at<double>(report, "/seconds/execute", 0.0),
                                json_at<double>(report, "/accuracy/max_abs_error", 0.0), files);
  if (files == 0) {
    log::warn("{}: the job wrote no cache files (nothing to package)", job.id);
  } else {
    outcome.outputs.push_back(JobOutput{staging, run_requirements(context.target, planned)});
  }
  return outcome;
}

} // namespace prewarm::build
