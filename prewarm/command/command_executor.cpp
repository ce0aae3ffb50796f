// SPDX-License-Identifier: Apache-2.0
#include "command/command_executor.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "bundle/runtime_variable.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <system_error>

namespace prewarm::command {

namespace {

namespace fs = std::filesystem;

const char*
ending_name(SubprocessResult::Ending ending)
{
  switch (ending) {
  case SubprocessResult::Ending::exited:
    return "exited";
  case SubprocessResult::Ending::signaled:
    return "signaled";
  case SubprocessResult::Ending::timed_out:
    return "timed_out";
  case SubprocessResult::Ending::output_overflow: // no output limit on a workload
  case SubprocessResult::Ending::stopped:         // an interruption is an error, not a result
    return "signaled";
  }
  return "?";
}

std::string
summary_line(const CommandJobResult& result)
{
  std::string kinds;
  for (const auto& k : result.capture.kinds) {
    if (k.files == 0) {
      continue;
    }
    kinds += fmt::format("{}{} {} files {} B", kinds.empty() ? "" : ", ", to_string(k.kind), k.files, k.bytes);
  }
  for (const auto& c : result.capture.custom) {
    if (c.files > 0) {
      kinds += fmt::format("{}custom/{} {} files {} B", kinds.empty() ? "" : ", ", c.name, c.files, c.bytes);
    }
  }
  std::string proof;
  if (result.hit_proof) {
    // The proof's own time: it runs the command a second time, and the job
    // takes both runs.
    proof = fmt::format("; hit proof{}: {} (in {:.2f} s)", result.hit_proof->hit() ? "" : " MISSED",
                        result.hit_proof->line(),
                        std::chrono::duration<double>(result.hit_proof->run.duration).count());
  }
  return fmt::format("command {} in {:.2f} s; captured {}{}", result.run.describe(),
                     std::chrono::duration<double>(result.run.duration).count(),
                     kinds.empty() ? std::string("nothing") : kinds, proof);
}

} // namespace

Result<CommandWorkload>
to_command_workload(const manifest::CommandWorkload& workload)
{
  CommandWorkload out;
  out.working_directory = workload.cwd;
  out.environment = workload.env;
  out.timeout = workload.timeout;
  if (workload.shell == manifest::ShellMode::shell) {
    // The manifest's contract: argv is joined and run by /bin/sh -c.
    std::string line;
    for (const auto& word : workload.argv) {
      line += line.empty() ? "" : " ";
      line += word;
    }
    out.argv = {line};
    out.shell = ShellMode::via_shell;
  } else {
    out.argv = workload.argv;
  }
  out.kinds = workload.kinds;
  out.no_builtin_kinds = workload.no_builtin_kinds;
  for (const auto& cache : workload.caches) {
    out.custom_caches.push_back(CustomCacheRequest{cache.name, cache.variable, cache.subdir, cache.flag});
  }
  switch (workload.verify) {
  case manifest::VerifyMode::off:
    out.verify = VerifyMode::off;
    break;
  case manifest::VerifyMode::warn:
    out.verify = VerifyMode::warn;
    break;
  case manifest::VerifyMode::require:
    out.verify = VerifyMode::require;
    break;
  }
  return out;
}

std::vector<std::string>
unexported_variables(const manifest::CommandWorkload& command)
{
  std::vector<std::string> out;
  const std::set<std::string, std::less<>> no_policy;
  const auto check = [&](const std::string& name, const std::string& value, bundle::VariableRole role,
                         const std::string& what) {
    const auto allowed = bundle::check_allowed_variable(name, value, role, no_policy);
    if (allowed) {
      return;
    }
    out.push_back(fmt::format(
      "{} prewarm-runtime env and exec will not export ${} unless the trust policy names it (install: "
      "{{environment: [{}]}}), and the hit proof ran with it set: {}",
      what, name, name, allowed.error().message()));
  };
  for (const auto& cache : command.caches) {
    if (cache.flag) {
      check(cache.variable, cache.flag->key, bundle::VariableRole::cache_flag,
            fmt::format("custom cache {} (flag {}):", cache.name, cache.flag->key));
    } else {
      check(cache.variable, "", bundle::VariableRole::cache_location, fmt::format("custom cache {}:", cache.name));
    }
  }
  for (const auto& [name, value] : command.runtime_env) {
    check(name, value, bundle::VariableRole::runtime_env, "runtime_env");
  }
  return out;
}

std::string
report_json(const CommandJobResult& result)
{
  nlohmann::json kinds = nlohmann::json::array();
  for (const auto& k : result.capture.kinds) {
    kinds.push_back({{"kind", to_string(k.kind)},
                     {"files", k.files},
                     {"bytes", k.bytes},
                     {"bookkeeping_removed", k.bookkeeping_removed},
                     {"from_default_location", k.from_default_location}});
  }
  for (const auto& c : result.capture.custom) {
    kinds.push_back({{"kind", fmt::format("custom/{}", c.name)},
                     {"variable", c.variable},
                     {"files", c.files},
                     {"bytes", c.bytes},
                     {"outside_subdir_removed", c.outside_subdir_removed}});
  }
  nlohmann::json identities = nlohmann::json::array();
  for (const auto& identity : result.identities) {
    nlohmann::json requirements = nlohmann::json::array();
    for (const auto& r : identity.requirements) {
      requirements.push_back(fmt::format("{} {} {}", r.key, r.op, r.value));
    }
    identities.push_back({{"kind", to_string(identity.kind)}, {"requirements", requirements}});
  }
  nlohmann::json report = {
    {"job", result.job_id},
    {"argv", result.argv},
    {"succeeded", result.succeeded()},
    {"ending", ending_name(result.run.ending)},
    {"exit_status", result.run.exit_status},
    {"signal", result.run.signal},
    {"seconds", std::chrono::duration<double>(result.run.duration).count()},
    {"log_file", result.log_file.string()},
    {"kinds", kinds},
    {"identities", identities},
    {"frameworks", result.frameworks},
    {"warnings", result.warnings},
  };
  if (!result.succeeded()) {
    report["output_tail"] = result.run.output_tail;
  }
  report["verify"] = to_string(result.verify);
  if (result.hit_proof) {
    const auto& proof = *result.hit_proof;
    nlohmann::json hit_proof = audit::to_json(proof.usage);
    hit_proof["hit"] = proof.hit();
    hit_proof["line"] = proof.line();
    hit_proof["succeeded"] = proof.run.succeeded();
    hit_proof["seconds"] = std::chrono::duration<double>(proof.run.duration).count();
    hit_proof["log_file"] = result.hit_proof_log.string();
    hit_proof["misses"] = proof.misses();
    hit_proof["causes"] = proof.causes;
    hit_proof["uncaptured"] = proof.uncaptured;
    report["hit_proof"] = std::move(hit_proof);
  }
  // Output of arbitrary programs need not be UTF-8: replace, never throw.
  return report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// The job's request: its workload, the target and precision it runs for, and
// the devices its caches are recorded for.
Result<CommandJobRequest>
job_request(const jobs::JobContext& context, const CommandExecutorOptions& options)
{
  const auto& job = context.job;
  CommandJobRequest request;
  request.job_id = job.id;
  PW_ASSIGN_CTX(request.workload, job.id, to_command_workload(*context.model.command));
  request.workload.environment.emplace("PREWARM_TARGET", job.target);
  if (job.has_precision) {
    request.precision = std::string(manifest::precision_name(job.precision));
    request.workload.environment.emplace("PREWARM_PRECISION", request.precision);
  }
  request.work_dir = context.work_dir / "capture";
  request.log_file = context.log_file;
  request.home = options.home;
  request.frameworks = options.frameworks;
  std::error_code ec;
  if (!fs::create_directory(request.work_dir, ec) || ec) {
    return fail(Errc::failed, fmt::format("{}: cannot create {}: {}", job.id, in_quotes(request.work_dir.string()),
                                          ec ? ec.message() : "it exists already"));
  }
  // The device the plan matched for this target is the identity the caches
  // are recorded for (the PoCL device for `cpu`, the GPU for a GPU target).
  if (job.device) {
    request.list_opencl_devices = [device = job.device->properties] {
      return std::vector<DeviceProperties>{device};
    };
  }
  request.list_nvidia_gpus = [&options, &job] {
    auto gpus = options.list_nvidia_gpus ? options.list_nvidia_gpus() : probe_nvidia_gpus();
    if (gpus.empty() && job.device && job.device->properties.contains(prop::nvidia_sm)) {
      // No nvidia-smi and no /proc entry (unusual container): what OpenCL
      // told the plan about the GPU is the best we know.
      gpus.push_back(job.device->properties);
    }
    return gpus;
  };

  return request;
}

// One staging directory per group of kinds with the same requirements: the
// job's outputs, each with its custom caches and the model's runtime_env.
Status
add_outputs(const jobs::JobContext& context, const CommandJobResult& result, jobs::JobOutcome& outcome)
{
  const auto& job = context.job;
  std::error_code ec;
  int index = 0;
  for (const auto& group : result.slice_groups()) {
    const auto staging = context.work_dir / fmt::format("output-{}", index++);
    if (!fs::create_directory(staging, ec) || ec) {
      return fail(Errc::failed, fmt::format("{}: cannot create {}: {}", job.id, in_quotes(staging.string()),
                                            ec ? ec.message() : "it exists already"));
    }
    std::vector<std::string> moved;
    for (const auto kind : group.kinds) {
      moved.emplace_back(to_string(kind));
    }
    jobs::JobOutput output{staging, group.requirements};
    output.site_packages = group.site_packages;
    if (!group.custom_caches.empty()) {
      fs::create_directory(staging / std::string(bundle::k_custom_kind), ec);
      for (const auto& name : group.custom_caches) {
        moved.push_back(fmt::format("{}/{}", bundle::k_custom_kind, name));
        const auto& spec = *std::find_if(context.model.command->caches.begin(), context.model.command->caches.end(),
                                         [&](const auto& c) { return c.name == name; });
        output.caches.push_back(bundle::CustomCache{name, spec.variable, spec.flag});
      }
    }
    for (const auto& relative : moved) {
      const auto from = result.staging_root / relative;
      const auto to = staging / relative;
      if (std::rename(from.c_str(), to.c_str()) != 0) {
        return fail(Errc::failed, fmt::format("{}: cannot move {} to {}: {}", job.id, in_quotes(from.string()),
                                              in_quotes(to.string()), errno_message(errno)));
      }
    }
    // runtime_env travels with every slice of the job: any one of them
    // installed means the application of this model runs here.
    for (const auto& [name, value] : context.model.command->runtime_env) {
      output.environment.push_back({name, value});
    }
    outcome.outputs.push_back(std::move(output));
  }
  return {};
}

} // namespace

Result<jobs::JobOutcome>
CommandExecutor::run(const jobs::JobContext& context)
{
  const auto& job = context.job;
  if (!context.model.command) {
    return fail(Errc::internal, fmt::format("{}: a command job without a command", job.id));
  }
  PW_ASSIGN(auto request, job_request(context, m_options));
  // The root is one directory: jobs that capture there take turns.
  std::unique_lock<std::mutex> root_turn;
  if (!m_options.capture_root.empty()) {
    request.capture_root = m_options.capture_root;
    root_turn = std::unique_lock(m_capture_root_busy);
  }
  for (const auto& warning : unexported_variables(*context.model.command)) {
    log::warn("{}: {}", job.id, warning);
  }
  PW_ASSIGN(auto result, run_command_job(request));
  for (const auto& warning : result.warnings) {
    log::warn("{}: {}", job.id, warning);
  }
  if (!result.succeeded()) {
    return fail(Errc::failed, result.report());
  }
  if (const auto failure = result.packing_failure()) {
    return fail(Errc::failed, *failure);
  }
  if (const auto failure = result.required_proof_failure()) {
    return fail(Errc::failed, *failure);
  }

  jobs::JobOutcome outcome;
  outcome.device = job.device ? job.device->description : job.target;
  outcome.seconds = std::chrono::duration<double>(result.total_duration).count(); // capture, proof, bookkeeping
  outcome.summary = summary_line(result);
  outcome.job_line = result.job_line();
  outcome.report_json = report_json(result);
  PW_TRY(add_outputs(context, result, outcome));
  return outcome;
}

} // namespace prewarm::command
