// SPDX-License-Identifier: Apache-2.0
// prewarm build [MANIFEST] --key K --out BUNDLE [--shard I/N] [--jobs N]
//               [--keep-going] [--channel C] [--serial N] [--targets FILE] [--json FILE]
//               [--log-dir DIR] [--capture-root PATH] [--allow-expired] [--show-config]
// and the hidden `prewarm run-job` that runs one built-in job in a child.
#include "cli/commands.hpp"

#include "base/log.hpp"
#include "bundle_build/build_command.hpp"
#include "builtin/builtin_job.hpp"
#include "jobs/interruption.hpp"

#include <limits>
#include <memory>

namespace prewarm::cli {
namespace {

void
add_run_job_command(CLI::App& app, Action& action)
{
  auto spec_file = std::make_shared<std::string>();
  // Internal: `prewarm build` runs each built-in job through this in a child
  // process, from the job request it wrote (builtin/job_request.hpp). Hidden (no group).
  auto* cmd = app.add_subcommand("run-job", "");
  cmd->group("");
  cmd->add_option("--spec", *spec_file)->required();
  cmd->callback([&action, spec_file] { action = [spec_file] { return builtin::run_builtin_job(*spec_file); }; });
}

} // namespace

void
add_build_command(CLI::App& app, Action& action)
{
  auto args = std::make_shared<bundle_build::BuildRequest>();
  auto* cmd = app.add_subcommand("build", "run the manifest's jobs, collect the caches they fill and write a "
                                          "signed bundle");
  cmd->add_option("manifest", args->manifest_file, "build manifest (default: the built-in default manifest)")
    ->check(CLI::ExistingFile);
  // --key and --out are checked by the command (not CLI11), so that
  // --show-config works without them and a missing key gets prewarm's hint.
  cmd->add_option("--key", args->key_files, "private key NAME.key that signs the bundle (repeatable; required)");
  cmd->add_option("--out", args->out, "bundle directory to write (required)");
  cmd->add_option("--shard", args->shard, "only shard I of N (1-based) of the jobs (CI matrices; merge after)");
  cmd
    ->add_option("--jobs", args->parallel_jobs,
                 "jobs to run at once, build jobs and their compiles together (default 1)")
    ->check(CLI::Range(1, 256));
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
  cmd->add_flag("--allow-expired", args->allow_expired,
                "write the bundle even when it would expire within a day (SOURCE_DATE_EPOCH + bundle.expires); "
                "a warning instead of an error");
  cmd->add_flag("--show-config", args->show_config,
                "print every setting and where it came from (flag, environment, manifest, default); run nothing");
  cmd->footer("Prints '<manifest sha256>  <BUNDLE>/manifest' on stdout; per-job reports go to stderr.\n"
              "SOURCE_DATE_EPOCH sets issued-at, archive times and the default serial (reproducible bundles);\n"
              "without it the serial is the clock's seconds, so a rebuild installs over the last one.\n"
              "A bundle that would expire within a day of being written is refused (--allow-expired: warned).\n"
              "Progress on stderr: live lines on a terminal, else a heartbeat every 10 s\n"
              "(PREWARM_PROGRESS=live|heartbeat|off, PREWARM_PROGRESS_INTERVAL=SECONDS; -q: none).\n"
              "Exit: 0 ok, 1 a job failed (or nothing to package), 2 usage or manifest error.");
  cmd->callback([&action, args] {
    action = [args] {
      // SIGTERM/SIGINT: the running commands are killed and the temporary
      // directories removed (build_bundle returns), then the signal's
      // default action ends the process as the caller expects.
      jobs::catch_interruptions();
      auto status = bundle_build::build_bundle(*args);
      if (!status && jobs::interruption_signal() != 0) {
        log::error("{}", status.error().describe());
      }
      jobs::reraise_interruption();
      return status;
    };
  });
  add_run_job_command(app, action);
}

} // namespace prewarm::cli
