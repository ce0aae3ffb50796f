// SPDX-License-Identifier: Apache-2.0
// prewarm build [MANIFEST] --key K --out BUNDLE [--shard I/N] [--jobs N]
//               [--keep-going] [--channel C] [--serial N] [--targets FILE] [--json FILE]
// and the hidden `prewarm run-job` that runs one built-in job in a child.
#include "cli/commands.hpp"

#include "aot/aot_executor.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "build/build_runner.hpp"
#include "build/builtin_executor.hpp"
#include "build/builtin_job.hpp"
#include "build/child_process.hpp"
#include "build/host_probe.hpp"
#include "command/command_executor.hpp"
#include "pack/bundle_writer.hpp"
#include "pack/key_pair.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <memory>

namespace prewarm::cli {
namespace {

struct BuildArgs
{
  std::string manifest_file;
  std::vector<std::string> key_files;
  std::string out;
  std::string shard = "1/1";
  int jobs = 1;
  bool keep_going = false;
  std::string channel;
  std::uint64_t serial = 0;
  std::string targets_file;
  std::string json_file;
};

std::filesystem::path
absolute_path(const std::string& path)
{
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec);
  return ec ? std::filesystem::path(path) : absolute;
}

Status
run_build_command(const BuildArgs& args)
{
  build::BuildOptions options;
  // Messages name the files as the user gave them; the job children get
  // absolute paths (they inherit our working directory, but a path that does
  // not depend on it is one less thing to go wrong).
  if (!args.manifest_file.empty()) {
    options.manifest_file = args.manifest_file;
  }
  if (!args.targets_file.empty()) {
    options.targets_file = args.targets_file;
  }
  PW_ASSIGN(options.shard, manifest::Shard::parse(args.shard));
  options.parallel_jobs = args.jobs;
  options.on_failure = args.keep_going ? build::FailurePolicy::keep_going : build::FailurePolicy::stop;
  if (!args.channel.empty()) {
    options.channel = args.channel;
  }
  if (args.serial != 0) {
    options.serial = args.serial;
  }

  // Everything that can be wrong with the inputs is found before a job runs.
  PW_ASSIGN(const auto inputs, build::load_build_inputs(options));
  std::vector<pack::PrivateKey> keys;
  for (const auto& file : args.key_files) {
    PW_ASSIGN_CTX(auto key, fmt::format("loading signing key {}", file), pack::PrivateKey::load(file));
    keys.push_back(std::move(key));
  }
  PW_ASSIGN(const auto self, build::self_executable());

  const auto host = build::probe_host_capabilities(inputs.registry);
  std::vector<std::unique_ptr<build::Executor>> executors;
  executors.push_back(std::make_unique<build::BuiltinExecutor>(
    build::BuiltinExecutorOptions{self,
                                  options.manifest_file ? std::optional(absolute_path(args.manifest_file))
                                                        : std::nullopt,
                                  options.targets_file ? std::optional(absolute_path(args.targets_file))
                                                       : std::nullopt}));
  executors.push_back(std::make_unique<command::CommandExecutor>());
  executors.push_back(std::make_unique<aot::AotExecutor>(
    aot::AotExecutorOptions{static_cast<unsigned>(std::max(1, args.jobs))}));

  log::info("building {} ({} targets, {} models, {} precisions) on this host, shard {}",
            inputs.manifest.source_name, inputs.manifest.targets.size(), inputs.manifest.models.size(),
            inputs.manifest.precisions.size(), options.shard.to_string());
  PW_ASSIGN(const auto result, build::run_build(options, inputs, host, executors));
  if (!args.json_file.empty()) {
    PW_TRY_CTX(fmt::format("writing the report {}", args.json_file),
               write_file_atomic(args.json_file, result.to_json() + "\n", 0644, Durability::none));
  }
  log::info("{}", result.summary());
  if (result.spec.slices.empty()) {
    return fail(Errc::failed, fmt::format("no job produced a cache, so there is nothing to package; no bundle "
                                          "written ({})",
                                          result.summary()));
  }
  PW_ASSIGN(const auto written, pack::write_bundle(result.spec, keys, args.out));
  fmt::print("{}  {}/manifest\n", written.manifest_sha256, written.dir.string());
  if (result.failed > 0) {
    return fail(Errc::failed, fmt::format("{} of {} jobs failed (the bundle {} holds the others)", result.failed,
                                          result.records.size(), written.dir.string()));
  }
  return {};
}

void
add_run_job_command(CLI::App& app, Action& action)
{
  auto args = std::make_shared<build::BuiltinJobArgs>();
  auto manifest_file = std::make_shared<std::string>();
  auto targets_file = std::make_shared<std::string>();
  // Internal: `prewarm build` runs each built-in job through this in a child
  // process whose cache variables point at the job's staging. Hidden (no group).
  auto* cmd = app.add_subcommand("run-job", "");
  cmd->group("");
  cmd->add_option("--job", args->job_id)->required();
  cmd->add_option("--device", args->device)->required();
  cmd->add_option("--report", args->report_file)->required();
  cmd->add_option("--manifest", *manifest_file);
  cmd->add_option("--targets", *targets_file);
  cmd->callback([&action, args, manifest_file, targets_file] {
    if (!manifest_file->empty()) {
      args->manifest_file = *manifest_file;
    }
    if (!targets_file->empty()) {
      args->targets_file = *targets_file;
    }
    action = [args] { return build::run_builtin_job(*args); };
  });
}

} // namespace

void
add_build_command(CLI::App& app, Action& action)
{
  auto args = std::make_shared<BuildArgs>();
  auto* cmd = app.add_subcommand("build", "run the manifest's jobs, collect the caches they fill and write a "
                                          "signed bundle");
  cmd->add_option("manifest", args->manifest_file, "build manifest (default: the built-in default manifest)")
    ->check(CLI::ExistingFile);
  cmd->add_option("--key", args->key_files, "private key that signs the bundle (repeatable)")
    ->required()
    ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "bundle directory to write")->required();
  cmd->add_option("--shard", args->shard, "only shard I of N (1-based) of the jobs (CI matrices; merge after)");
  cmd->add_option("--jobs", args->jobs, "jobs to run at once (default 1)")->check(CLI::Range(1, 256));
  cmd->add_flag("--keep-going", args->keep_going,
                "record a failed job and continue; package the others; exit 1 at the end");
  cmd->add_option("--channel", args->channel, "bundle channel (overrides the manifest's bundle.channel)");
  cmd->add_option("--serial", args->serial, "bundle serial (overrides the manifest's bundle.serial)")
    ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  cmd->add_option("--targets", args->targets_file, "target registry file (default: the built-in registry)")
    ->check(CLI::ExistingFile);
  cmd->add_option("--json", args->json_file, "also write a per-job JSON report to this file");
  cmd->footer("Prints '<manifest sha256>  <BUNDLE>/manifest' on stdout; per-job reports go to stderr.\n"
              "SOURCE_DATE_EPOCH sets issued-at and archive times (reproducible bundles).\n"
              "Exit: 0 ok, 1 a job failed (or nothing to package), 2 usage or manifest error.");
  cmd->callback([&action, args] { action = [args] { return run_build_command(*args); }; });
  add_run_job_command(app, action);
}

} // namespace prewarm::cli
