// SPDX-License-Identifier: Apache-2.0
// prewarm build [MANIFEST] --key K --out BUNDLE [--shard I/N] [--jobs N]
//               [--keep-going] [--channel C] [--serial N] [--targets FILE] [--json FILE]
//               [--log-dir DIR] [--capture-root PATH] [--show-config]
// and the hidden `prewarm run-job` that runs one built-in job in a child.
#include "cli/commands.hpp"

#include "cli/build_settings.hpp"

#include "aot/aot_executor.hpp"
#include "aot/recorded_aot_executor.hpp"
#include "aot/toolchains.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "base/time_format.hpp"
#include "build/build_runner.hpp"
#include "build/builtin_executor.hpp"
#include "build/builtin_job.hpp"
#include "build/bundle_serial.hpp"
#include "build/child_process.hpp"
#include "build/host_probe.hpp"
#include "build/job_logs.hpp"
#include "build/output_preflight.hpp"
#include "build/progress_board.hpp"
#include "command/capture_root.hpp"
#include "command/command_executor.hpp"
#include "command/interruption.hpp"
#include "pack/bundle_writer.hpp"
#include "pack/key_pair.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
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
  std::string log_dir;
  std::string capture_root;
  bool show_config = false;
};

std::filesystem::path
absolute_path(const std::string& path)
{
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec);
  return ec ? std::filesystem::path(path) : absolute;
}

std::string
environment_or(const char* name, std::string_view otherwise)
{
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : std::string(otherwise);
}

// What --show-config prints: every setting with the place it came from.
Result<std::vector<Setting>>
resolved_settings(const BuildArgs& args, const build::BuildOptions& options, const build::BuildInputs& inputs)
{
  std::vector<Setting> out;
  const auto flag_or = [](bool given, std::string flag, std::string otherwise) {
    return given ? flag : otherwise;
  };
  out.push_back({"manifest", inputs.manifest.source_name, flag_or(!args.manifest_file.empty(), "argument", "default")});
  out.push_back({"targets", args.targets_file.empty() ? "<embedded targets.yaml>" : args.targets_file,
                 flag_or(!args.targets_file.empty(), "--targets", "default")});
  out.push_back({"channel", options.channel.value_or(inputs.manifest.bundle.channel),
                 flag_or(options.channel.has_value(), "--channel", inputs.manifest.source_name)});
  PW_ASSIGN(const auto serial, build::choose_serial(options.serial, inputs.manifest));
  out.push_back({"serial", std::to_string(serial.value), serial.origin});
  PW_ASSIGN(const auto epoch, source_date_epoch());
  out.push_back({"issued-at", epoch ? format_rfc3339(*epoch) : "the build time",
                 epoch ? "environment SOURCE_DATE_EPOCH" : "default"});
  out.push_back({"expires", inputs.manifest.bundle.expires_text + " after issued-at", inputs.manifest.source_name});
  out.push_back({"key", args.key_files.empty() ? "(none)" : fmt::format("{}", fmt::join(args.key_files, " ")),
                 flag_or(!args.key_files.empty(), "--key", "default")});
  out.push_back({"out", args.out.empty() ? "(none)" : args.out, flag_or(!args.out.empty(), "--out", "default")});
  const auto log_dir = !args.log_dir.empty() ? std::filesystem::path(args.log_dir)
                       : !args.out.empty()    ? build::default_log_dir(args.out)
                                              : std::filesystem::path();
  out.push_back({"log-dir", log_dir.empty() ? "(none)" : log_dir.string(),
                 flag_or(!args.log_dir.empty(), "--log-dir", "default: <out>.logs")});
  out.push_back({"json", args.json_file.empty() ? "(none)" : args.json_file,
                 flag_or(!args.json_file.empty(), "--json", "default")});
  out.push_back({"capture-root", args.capture_root.empty() ? "(none: each job's work directory)" : args.capture_root,
                 flag_or(!args.capture_root.empty(), "--capture-root", "default")});
  out.push_back({"shard", options.shard.to_string(), flag_or(args.shard != "1/1", "--shard", "default")});
  out.push_back({"jobs", std::to_string(args.jobs), flag_or(args.jobs != 1, "--jobs", "default")});
  out.push_back({"keep-going", args.keep_going ? "true" : "false", flag_or(args.keep_going, "--keep-going", "default")});
  out.push_back({"progress", std::string(build::to_string(options.progress.mode)), options.progress.mode_origin});
  out.push_back({"progress-interval", fmt::format("{} ms", options.progress.interval.count()),
                 options.progress.interval_origin});
  const bool ocloc_set = std::getenv("PREWARM_OCLOC") != nullptr;
  out.push_back({"ocloc", environment_or("PREWARM_OCLOC", "per target, the first that knows it: ocloc in PATH, the Intel root's"),
                 ocloc_set ? "environment PREWARM_OCLOC" : "default"});
  const bool root_set = std::getenv(std::string(aot::k_intel_root_variable).c_str()) != nullptr;
  const auto root = aot::intel_root();
  out.push_back({"intel-root",
                 root.empty()                        ? std::string("none")
                 : aot::intel_root_complete(root) ? root.string()
                                                     : root.string() + " (not made: ./setup.sh intel-root)",
                 root_set ? "environment PREWARM_INTEL_ROOT" : "default"});
  const bool double_set = std::getenv("PREWARM_HOST_DEVICES") != nullptr;
  out.push_back({"host-devices", environment_or("PREWARM_HOST_DEVICES", "probed (OpenCL, nvidia-smi, sysfs)"),
                 double_set ? "environment PREWARM_HOST_DEVICES (test double)" : "default"});
  return out;
}

// Everything the build will write, checked before a job runs (item by item,
// so the message names the one to fix).
Status
check_outputs(const BuildArgs& args, const std::filesystem::path& log_dir)
{
  PW_TRY(build::check_output_path(args.out, build::OutputKind::bundle_directory, "--out"));
  if (!args.json_file.empty()) {
    PW_TRY(build::check_output_path(args.json_file, build::OutputKind::file, "--json"));
  }
  PW_TRY(build::check_output_path(log_dir, build::OutputKind::directory,
                                  args.log_dir.empty() ? "the job log directory (--log-dir)" : "--log-dir"));
  return {};
}

Status
make_parent_directories(const std::filesystem::path& file)
{
  std::error_code ec;
  if (file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), ec);
  }
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", file.parent_path().string(), ec.message()));
  }
  return {};
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
  // Absolute: job children run in their own working directories, and the
  // "full log:" lines are to be found from anywhere.
  if (!args.log_dir.empty()) {
    options.log_dir = absolute_path(args.log_dir);
  } else if (!args.out.empty()) {
    options.log_dir = build::default_log_dir(absolute_path(args.out));
  }
  PW_ASSIGN(options.progress, build::progress_options_from_environment());
  // Messages name the log directory as the user would type it.
  const auto log_dir_shown =
    (!args.log_dir.empty() ? std::filesystem::path(args.log_dir) : build::default_log_dir(args.out)).string();

  // Everything that can be wrong with the inputs is found before a job runs.
  PW_ASSIGN(const auto inputs, build::load_build_inputs(options));
  if (args.show_config) {
    PW_ASSIGN(const auto settings, resolved_settings(args, options, inputs));
    fmt::print("{}", format_settings(settings));
    return {};
  }
  if (args.key_files.empty() || args.out.empty()) {
    return fail(Errc::usage,
                fmt::format("build: {} required (prewarm build [MANIFEST] --key NAME.key --out BUNDLE; make a key "
                            "with `prewarm keygen --out keys/NAME`)",
                            args.key_files.empty() ? (args.out.empty() ? "--key and --out are" : "--key is")
                                                   : "--out is"),
                "E_USAGE");
  }
  PW_TRY(check_outputs(args, log_dir_shown));
  if (!args.capture_root.empty()) {
    PW_TRY(command::check_capture_root(args.capture_root, "--capture-root"));
  }
  std::vector<pack::PrivateKey> keys;
  for (const auto& file : args.key_files) {
    PW_ASSIGN(auto key, pack::PrivateKey::load(file));
    keys.push_back(std::move(key));
  }
  PW_TRY(build::choose_serial(options.serial, inputs.manifest)); // a bad SOURCE_DATE_EPOCH fails now
  PW_ASSIGN(const auto self, build::self_executable());

  const auto host = build::probe_host_capabilities(inputs.registry);
  std::vector<std::unique_ptr<build::Executor>> executors;
  executors.push_back(std::make_unique<build::BuiltinExecutor>(build::BuiltinExecutorOptions{self}));
  command::CommandExecutorOptions command_options;
  command_options.capture_root = args.capture_root;
  executors.push_back(std::make_unique<command::CommandExecutor>(std::move(command_options)));
  executors.push_back(std::make_unique<aot::AotExecutor>(
    aot::AotExecutorOptions{static_cast<unsigned>(std::max(1, args.jobs))}));
  executors.push_back(std::make_unique<aot::RecordedAotExecutor>(
    aot::RecordedAotOptions{static_cast<unsigned>(std::max(1, args.jobs))}));

  log::info("building {} ({} targets, {} models, {} precisions) on this host, shard {}; job logs in {}",
            inputs.manifest.source_name, inputs.manifest.targets.size(), inputs.manifest.models.size(),
            inputs.manifest.precisions.size(), options.shard.to_string(), log_dir_shown);
  PW_ASSIGN(const auto result, build::run_build(options, inputs, host, executors));
  if (!args.json_file.empty()) {
    PW_TRY_CTX(fmt::format("writing the report {}", args.json_file), make_parent_directories(args.json_file));
    PW_TRY_CTX(fmt::format("writing the report {}", args.json_file),
               write_file_atomic(args.json_file, result.to_json() + "\n", 0644, Durability::none));
  }
  log::info("{}", result.summary());
  log::info("job logs: {}/", log_dir_shown);
  if (result.spec.slices.empty()) {
    return fail(Errc::failed, fmt::format("no job produced a cache, so there is nothing to package; no bundle "
                                          "written ({}; job logs in {}/)",
                                          result.summary(), log_dir_shown));
  }
  PW_ASSIGN(const auto written, pack::write_bundle(result.spec, keys, args.out));
  fmt::print("{}  {}/manifest\n", written.manifest_sha256, written.dir.string());
  if (result.failed > 0) {
    return fail(Errc::failed, fmt::format("{} of {} jobs failed (the bundle {} holds the others; job logs in {}/)",
                                          result.failed, result.records.size(), written.dir.string(),
                                          log_dir_shown));
  }
  return {};
}

void
add_run_job_command(CLI::App& app, Action& action)
{
  auto spec_file = std::make_shared<std::string>();
  // Internal: `prewarm build` runs each built-in job through this in a child
  // process, from the job spec it wrote (build/job_spec.hpp). Hidden (no group).
  auto* cmd = app.add_subcommand("run-job", "");
  cmd->group("");
  cmd->add_option("--spec", *spec_file)->required();
  cmd->callback([&action, spec_file] { action = [spec_file] { return build::run_builtin_job(*spec_file); }; });
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
  // --key and --out are checked by the command (not CLI11), so that
  // --show-config works without them and a missing key gets prewarm's hint.
  cmd->add_option("--key", args->key_files, "private key NAME.key that signs the bundle (repeatable; required)");
  cmd->add_option("--out", args->out, "bundle directory to write (required)");
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
  cmd->add_option("--log-dir", args->log_dir, "keep every job's full log here (default: BUNDLE.logs)");
  cmd->add_option("--capture-root", args->capture_root,
                  "command workloads capture at this absolute path, the prewarm-runtime install --root the bundle "
                  "is for, so caches keyed by path hit there (absent or empty; left as found; one job at a time)");
  cmd->add_flag("--show-config", args->show_config,
                "print every setting and where it came from (flag, environment, manifest, default); run nothing");
  cmd->footer("Prints '<manifest sha256>  <BUNDLE>/manifest' on stdout; per-job reports go to stderr.\n"
              "SOURCE_DATE_EPOCH sets issued-at, archive times and the default serial (reproducible bundles);\n"
              "without it the serial is the clock's seconds, so a rebuild installs over the last one.\n"
              "Progress on stderr: live lines on a terminal, else a heartbeat every 10 s\n"
              "(PREWARM_PROGRESS=live|heartbeat|off, PREWARM_PROGRESS_INTERVAL=SECONDS; -q: none).\n"
              "Exit: 0 ok, 1 a job failed (or nothing to package), 2 usage or manifest error.");
  cmd->callback([&action, args] {
    action = [args] {
      // SIGTERM/SIGINT: the running commands are killed and the temporary
      // directories removed (run_build_command returns), then the signal's
      // default action ends the process as the caller expects.
      command::catch_interruptions();
      auto status = run_build_command(*args);
      if (!status && command::interruption_signal() != 0) {
        log::error("{}", status.error().describe());
      }
      command::reraise_interruption();
      return status;
    };
  });
  add_run_job_command(app, action);
}

} // namespace prewarm::cli
