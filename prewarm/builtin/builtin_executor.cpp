// SPDX-License-Identifier: Apache-2.0
#include "builtin/builtin_executor.hpp"

#include "base/files.hpp"
#include "base/log.hpp"
#include "builtin/child_process.hpp"
#include "builtin/job_report.hpp"
#include "builtin/job_request.hpp"
#include "bundle/cache_kind.hpp"
#include "jobs/slice_identity.hpp"
#include "jobs/staged_kind.hpp"
#include "jobs/staged_output.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace prewarm::builtin {
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

} // namespace

Result<BuiltinJobRequest>
builtin_job_request(const jobs::JobContext& context, const std::filesystem::path& staging,
                    const std::filesystem::path& report_file)
{
  const auto& job = context.job;
  if (!job.device) {
    return fail(Errc::internal, fmt::format("{}: a run job without a device", job.id));
  }
  if (!context.model.architecture) {
    return fail(Errc::internal, fmt::format("{}: a built-in job without an architecture", job.id));
  }
  BuiltinJobRequest spec;
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

Result<jobs::JobOutcome>
BuiltinExecutor::run(const jobs::JobContext& context)
{
  const auto& job = context.job;
  const auto staging = context.work_dir / "staging";
  const auto report_file = context.work_dir / "report.json";
  PW_ASSIGN(const auto job_request, builtin_job_request(context, staging, report_file));
  std::vector<bundle::CacheKind> kinds;
  for (const auto& cache : job_request.caches) {
    kinds.push_back(cache.kind);
  }
  PW_TRY(jobs::create_staged_kinds(staging, kinds, jobs::ExistingKindDirectory::keep));
  const auto spec_file = context.work_dir / "job-request.json";
  PW_TRY_CTX(fmt::format("{}: writing the job request", job.id),
             write_file_atomic(spec_file.string(), to_json_text(job_request), 0600, Durability::none));

  Environment env = process::inherited_environment();
  // insert_or_assign with a std::string: g++ 12 warns (-Wrestrict, a false
  // positive) on operator[] assigning a literal here.
  env.insert_or_assign("PREWARM_DETERMINISTIC_TEMPNAMES", std::string("1"));
  ChildSpec spec;
  spec.argv = {m_options.executable.string(), "run-job", "--spec", spec_file.string()};
  spec.environment = std::move(env);
  spec.log_file = context.log_file_or("job.log");
  spec.working_directory = staging;
  spec.timeout = m_options.timeout;
  log::verbose("{}: {}", job.id, fmt::join(spec.argv, " "));
  PW_ASSIGN(const auto child, run_child(spec));
  const double seconds = std::chrono::duration<double>(child.duration).count();
  if (!child.succeeded()) {
    return fail(Errc::failed, fmt::format("{}: the job {} after {:.1f} s; full log: {}; its output ends with:\n{}",
                                          job.id, child.describe(), seconds, spec.log_file.string(),
                                          file_tail(spec.log_file)));
  }
  PW_ASSIGN_CTX(const auto report, job.id, load_job_report(report_file));

  // The child selected the device by index; make sure it is the device the
  // plan (and so the slice's requirements) is about.
  const auto& planned = job.device->properties;
  const auto planned_name = planned.find(prop::opencl_device);
  const auto reported_name = report.device_properties.find(prop::opencl_device);
  if (planned_name != planned.end() && reported_name != report.device_properties.end() &&
      !reported_name->second.empty() && reported_name->second != planned_name->second) {
    return fail(Errc::failed, fmt::format("{}: the job ran on '{}', the plan expected '{}'", job.id,
                                          reported_name->second, planned_name->second));
  }

  jobs::JobOutcome outcome;
  outcome.device = job.device->description;
  outcome.seconds = seconds;
  outcome.variants = report.variants.size();
  outcome.store_hits = report.store.hits;
  outcome.store_misses = report.store.misses;
  outcome.report_json = engine::models::to_json(report).dump();
  for (const auto& cache : job_request.caches) {
    const auto kind = cache.kind;
    PW_ASSIGN(const auto cleaned, jobs::clean_staged_kind(kind, staging / std::string(bundle::to_string(kind))));
    for (const auto& warning : cleaned.warnings) {
      log::warn("{}: {}", job.id, warning);
    }
  }
  PW_ASSIGN(const std::uint64_t files, jobs::prune_empty_kinds(staging));
  outcome.summary = fmt::format("{} variants, compile {:.2f} s, execute {:.2f} s, max error {:.2g}, {} cache files",
                                outcome.variants, report.compile_seconds, report.execute_seconds,
                                report.max_abs_error, files);
  if (files == 0) {
    log::warn("{}: the job wrote no cache files (nothing to package)", job.id);
  } else {
    outcome.outputs.push_back(jobs::JobOutput{staging, jobs::run_requirements(context.target, planned)});
  }
  return outcome;
}

} // namespace prewarm::builtin
