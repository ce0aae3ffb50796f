// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime exec --root DIR [--audit FILE] -- CMD ARGS...
// Sets the cache environment and replaces this process with CMD (execvp), so
// the application keeps the PID and the signals. Nothing installed (or an
// unreadable root) is a warning: the application must start regardless.
// CMD that cannot be run exits 127 (not found) or 126 (not executable), as
// env(1) does.
//
// With --audit FILE, exec stays the parent: it forks CMD, watches the
// installed cache directories while CMD runs (install/install_audit.hpp),
// forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGWINCH to
// it, writes the audit as JSON to FILE and one summary line to stderr, and
// exits with CMD's status (a CMD killed by a signal: the same signal again,
// so the caller sees what a direct run would show). An audit that cannot be
// made is a warning; CMD still runs, and its status is still the exit status.
// As PID 1 (exec --audit as a container's entrypoint) it is the init of the
// PID namespace and reaps every process orphaned to it, as tini does: it
// waits for any child, keeps the main one's status, and exits with it once
// the main child ends (the kernel then kills what is left in the namespace).
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

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

namespace prewarm::runtime_cli {

namespace {

volatile sig_atomic_t g_child = 0;

void
forward_signal(int signal_number)
{
  if (g_child > 0) {
    ::kill(static_cast<pid_t>(g_child), signal_number);
  }
}

constexpr int k_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

[[noreturn]] void
exec_command(const std::vector<std::string>& command)
{
  std::vector<char*> argv;
  for (const auto& a : command) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  const int e = errno;
  log::error("cannot run {}: {}", command.front(), errno_message(e));
  std::_Exit(e == ENOENT ? 127 : 126);
}

// The main child's status. As PID 1, every other child that ends meanwhile
// (orphans the kernel re-parents to init) is reaped too, and the ones that
// already ended when the main child does.
int
wait_for(pid_t child)
{
  const bool init = ::getpid() == 1;
  int status = 0;
  for (;;) {
    int st = 0;
    const pid_t pid = ::waitpid(init ? -1 : child, &st, 0);
    if (pid < 0) {
      if (errno == EINTR) {
        continue;
      }
      break; // ECHILD: nothing left to wait for (cannot happen before the child)
    }
    if (pid == child) {
      status = st;
      break;
    }
  }
  while (init && ::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  return status;
}

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
      exec_command(command);
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

    struct sigaction action{};
    action.sa_handler = forward_signal;
    ::sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    // Blocked across fork(): a signal that arrives before the parent knows
    // the child's PID is delivered (and forwarded) once it does.
    sigset_t forwarded;
    sigset_t previous;
    ::sigemptyset(&forwarded);
    for (const int s : k_forwarded_signals) {
      ::sigaction(s, &action, nullptr);
      ::sigaddset(&forwarded, s);
    }
    ::sigprocmask(SIG_BLOCK, &forwarded, &previous);
    const pid_t child = ::fork();
    if (child < 0) {
      ::sigprocmask(SIG_SETMASK, &previous, nullptr);
      log::warn("audit: cannot fork ({}); running {} without an audit", errno_message(errno), command.front());
      exec_command(command);
    }
    if (child == 0) {
      struct sigaction defaults{};
      defaults.sa_handler = SIG_DFL;
      for (const int s : k_forwarded_signals) {
        ::sigaction(s, &defaults, nullptr);
      }
      ::sigprocmask(SIG_SETMASK, &previous, nullptr);
      exec_command(command);
    }
    g_child = child;
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    const int status = wait_for(child);

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
    if (WIFSIGNALED(status)) {
      const int s = WTERMSIG(status);
      ::signal(s, SIG_DFL);
      ::raise(s);
      std::_Exit(128 + s);
    }
    std::exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
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
