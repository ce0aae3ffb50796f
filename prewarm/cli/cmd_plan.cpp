// SPDX-License-Identifier: Apache-2.0
// prewarm plan [MANIFEST] [--shard I/N] [--json] [--targets FILE]
// The jobs `prewarm build` would run on this host, with their strategy.
#include "cli/commands.hpp"

#include "base/json_schema.hpp"
#include "bundle_build/build_runner.hpp"
#include "bundle_build/host_capabilities.hpp"
#include "manifest/ci_matrix.hpp"
#include "manifest/plan.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace prewarm::cli {
namespace {

struct PlanArgs
{
  std::string manifest_file;
  std::string targets_file;
  std::string shard = "1/1";
  bool json = false;
  int shards = 0;     // --shards N: the CI job matrix instead of the jobs
  std::string format; // with --shards: json | github-matrix | gitlab
};

Status
run_plan(const PlanArgs& args)
{
  bundle_build::BuildOptions options;
  if (!args.manifest_file.empty()) {
    options.manifest_file = args.manifest_file;
  }
  if (!args.targets_file.empty()) {
    options.targets_file = args.targets_file;
  }
  if (args.shards > 0 && args.shard != "1/1") {
    return fail(Errc::usage, "--shards N prints the matrix of all N shards: leave out --shard");
  }
  if (args.shards == 0 && !args.format.empty()) {
    return fail(Errc::usage, "--format selects the CI matrix format: it needs --shards N");
  }
  PW_ASSIGN(options.shard, manifest::Shard::parse(args.shard));
  PW_ASSIGN(const auto inputs, bundle_build::load_build_inputs(options));
  const auto host = bundle_build::probe_host_capabilities(inputs.registry);
  if (args.shards > 0) {
    // The CI matrix (manifest/ci_matrix.hpp): shard I/N of the same
    // partition `prewarm build --shard I/N` builds, with its runner kind.
    PW_ASSIGN(const auto format, manifest::parse_ci_format(args.format.empty() ? "json" : args.format));
    std::vector<manifest::Plan> plans;
    for (int i = 1; i <= args.shards; ++i) {
      PW_ASSIGN(auto shard_plan, manifest::make_plan(inputs.manifest, inputs.registry, host,
                                                     manifest::Shard{i, args.shards}));
      plans.push_back(std::move(shard_plan));
    }
    PW_ASSIGN(const auto matrix, manifest::make_ci_matrix(plans));
    fmt::print("{}", manifest::format_ci_matrix(matrix, format, {args.manifest_file}));
    return {};
  }
  PW_ASSIGN(const auto plan, manifest::make_plan(inputs.manifest, inputs.registry, host, options.shard));
  if (args.json) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& job : plan.jobs) {
      nlohmann::json entry{{"id", job.id},
                           {"target", job.target},
                           {"model", job.model},
                           {"precision", job.has_precision ? nlohmann::json(manifest::precision_name(job.precision)) : nlohmann::json()},
                           {"strategy", manifest::to_string(job.strategy)},
                           {"reason", job.reason}};
      if (job.device) {
        entry["device"] = job.device->description;
      }
      jobs.push_back(std::move(entry));
    }
    const nlohmann::json out{{k_json_schema_version_key, k_json_schema_version},
                             {"manifest", inputs.manifest.source_name},
                             {"manifest_sha256", inputs.manifest.bytes_sha256},
                             {"shard", plan.shard.to_string()},
                             {"total_jobs", plan.total_jobs},
                             {"jobs", jobs}};
    fmt::print("{}\n", out.dump(2));
    return {};
  }
  std::size_t id_width = 3;
  for (const auto& job : plan.jobs) {
    id_width = std::max(id_width, job.id.size());
  }
  fmt::print("{:<{}}  {:<8}  {}\n", "JOB", id_width, "STRATEGY", "DETAIL");
  for (const auto& job : plan.jobs) {
    fmt::print("{:<{}}  {:<8}  {}\n", job.id, id_width, manifest::to_string(job.strategy), job.reason);
  }
  fmt::print("{} of {} jobs (shard {}): {} run, {} aot, {} skip\n", plan.jobs.size(), plan.total_jobs,
             plan.shard.to_string(), plan.count(manifest::Strategy::run), plan.count(manifest::Strategy::aot),
             plan.count(manifest::Strategy::skip));
  return {};
}

} // namespace

void
add_plan_command(CLI::App& app, Action& action)
{
  auto args = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand("plan", "print the jobs a build of MANIFEST runs on this host (target x model x "
                                         "precision, each run, aot or skip)");
  cmd->add_option("manifest", args->manifest_file, "build manifest (default: the built-in default manifest)")
    ->check(CLI::ExistingFile);
  cmd->add_option("--shard", args->shard, "only shard I of N (1-based): jobs whose index % N == I-1");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_option("--shards", args->shards,
                  "print the CI job matrix of N shards (each shard I/N with the runner kind its jobs need)")
    ->check(CLI::PositiveNumber);
  cmd->add_option("--format", args->format, "matrix format with --shards: json (default), github-matrix, gitlab");
  cmd->add_option("--targets", args->targets_file, "target registry file (default: the built-in registry)")
    ->check(CLI::ExistingFile);
  cmd->callback([&action, args] { action = [args] { return run_plan(*args); }; });
}

} // namespace prewarm::cli
