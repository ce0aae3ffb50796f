// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime exec --root DIR [--audit FILE] -- CMD ARGS...
// Sets the cache environment and replaces this process with CMD (execvp), so
// the application keeps the PID and the signals. Nothing installed (or an
// unreadable root) is a warning: the application must start regardless.
// CMD that cannot be run exits 127 (not found) or 126 (not executable), as
// env(1) does. Without --audit, the front (cli/front/main.cpp) usually answers
// from the start record before this runs; this is the full computation
// behind it, for whatever the record does not answer.
//
// With --audit FILE, exec stays the parent: it runs CMD as its child
// (process/supervise.hpp: signals forwarded, orphans reaped as PID 1),
// watches the installed cache directories while CMD runs
// (install/install_audit.hpp), writes the audit as JSON to FILE and one
// summary line to stderr, and exits as CMD ended. An audit that cannot be
// made is a warning; CMD still runs, and its status is still the exit status.
//
// One bundle for the application's life: the environment names one installed
// version (install/application_environment.hpp), and exec keeps the descriptors that hold
// it (and the private copies) open across execve, without FD_CLOEXEC, so that
// no install removes them while the application or a child that inherited
// them runs.
#include "audit/access_watch.hpp"
#include "audit/layer_audit_log.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "cli/runtime_commands.hpp"
#include "install/application_environment.hpp"
#include "install/install_audit.hpp"
#include "process/supervise.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/wait.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

namespace prewarm::runtime_cli {

namespace {

struct ExecCommand
{
  std::string root;
  std::string audit_file;
  std::vector<std::string> command;
  std::string paths = "version";
  // The version the application was given (its audit baseline).
  mutable std::optional<install::InstalledMarker> marker;
  mutable std::filesystem::path version_dir;

  Status run() const
  {
    // Whatever goes wrong here (even out of memory), the application starts.
    std::map<std::string, std::filesystem::path> used;
    try {
      if (auto env = install::environment(root, install::VersionHold::shared, exported_paths(paths))) {
        for (const auto& s : env->settings) {
          ::setenv(s.name.c_str(), s.value.c_str(), 1);
        }
        // Inherited by the application: the holds last as long as it does.
        for (auto& held : env->held) {
          const int fd = held.release();
          ::fcntl(fd, F_SETFD, 0);
        }
        marker = env->marker;
        version_dir = env->version_dir;
        used = std::move(env->directories);
      } else {
        log::warn("{}; starting {} without prewarm caches (it will compile kernels itself)",
                  env.error().describe(), command.front());
      }
    } catch (const std::exception& e) {
      log::warn("cannot read the install under {} ({}); starting {} without prewarm caches", root, e.what(),
                command.front());
    }
    if (audit_file.empty()) {
      process::replace_process(command);
    }
    run_audited(used);
  }

  [[noreturn]] void run_audited(const std::map<std::string, std::filesystem::path>& used) const
  {
    // Everything that can go wrong here costs the audit, never the run.
    auto baseline = marker ? install::read_audit_baseline(root, *marker, version_dir) : install::read_audit_baseline(root);
    std::unique_ptr<audit::AccessWatch> watch;
    if (baseline) {
      // The directories this user's application opens (a private copy for a
      // user who cannot write the root), and what they hold now.
      install::follow_directories(*baseline, used);
      if (auto started = install::take_run_start(*baseline); !started) {
        log::warn("audit: this run's own counts not measured: {}", started.error().describe());
        baseline->at_start.clear();
        baseline->states_at_start.clear();
      }
    }
    if (!baseline) {
      log::warn("audit: {}", baseline.error().describe());
    } else if (auto started = audit::AccessWatch::start(baseline->kind_dirs)) {
      watch = std::move(*started);
    } else {
      log::warn("audit: reuse not measured: {}", started.error().describe());
    }

    auto ran = process::run_forwarding_signals(command);
    if (!ran) {
      log::warn("audit: {}; running {} without an audit", ran.error().message(), command.front());
      process::replace_process(command);
    }
    const int status = *ran;

    std::optional<audit::AccessRecord> record;
    if (watch) {
      record = watch->stop();
    }
    if (baseline) {
      const char* layer_log = std::getenv(std::string(audit::k_layer_audit_log_variable).c_str());
      auto made = install::audit_install(*baseline, record ? &*record : nullptr, layer_log ? layer_log : "");
      if (made) {
        auto json = install::to_json(*made);
        json["application"] = WIFEXITED(status) ? nlohmann::json{{"exit_status", WEXITSTATUS(status)}}
                                                : nlohmann::json{{"signal", WTERMSIG(status)}};
        log::info("{}", install::summary_line(*made));
        if (auto written = write_file_atomic(audit_file, json.dump(2) + "\n"); !written) {
          log::warn("audit: {}", written.error().describe());
        }
      } else {
        log::warn("audit: {}", made.error().describe());
      }
    }
    process::exit_as(status);
  }
};

} // namespace

void
add_exec_command(CLI::App& app, Action& action)
{
  auto command = std::make_shared<ExecCommand>();
  auto* sub = app.add_subcommand("exec", "run a command with the cache environment set (exec, same PID)");
  sub->add_option("--root", command->root, "cache root")->required();
  sub->add_option("--audit", command->audit_file,
                  "stay the parent, watch the installed caches while the command runs, write what it reused and "
                  "compiled anew to this JSON file");
  add_paths_option(*sub, command->paths);
  sub->add_option("command", command->command, "the command and its arguments (after --)")->required();
  sub->callback([command, &action] { action = [command] { return command->run(); }; });
}

} // namespace prewarm::runtime_cli
