// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime exec --root DIR -- CMD ARGS...
// Sets the cache environment and replaces this process with CMD (execvp), so
// the application keeps the PID and the signals. Nothing installed (or an
// unreadable root) is a warning: the application must start regardless.
// CMD that cannot be run exits 127 (not found) or 126 (not executable), as
// env(1) does.
#include "base/files.hpp"
#include "base/log.hpp"
#include "cli/runtime_commands.hpp"
#include "install/environment.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <exception>
#include <memory>
#include <vector>

namespace prewarm::runtime_cli {

namespace {

struct ExecCommand
{
  std::string root;
  std::vector<std::string> command;

  Status run() const
  {
    // Whatever goes wrong here (even out of memory), the application starts.
    try {
      if (auto settings = install::environment(root)) {
        for (const auto& s : *settings) {
          ::setenv(s.name.c_str(), s.value.c_str(), 1);
        }
      } else {
        log::warn("{}; starting {} without prewarm caches (it will compile kernels itself)",
                  settings.error().describe(), command.front());
      }
    } catch (const std::exception& e) {
      log::warn("cannot read the install under {} ({}); starting {} without prewarm caches", root, e.what(),
                command.front());
    }
    std::vector<char*> argv;
    for (const auto& a : command) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const int e = errno;
    log::error("cannot run {}: {}", command.front(), errno_message(e));
    std::exit(e == ENOENT ? 127 : 126);
  }
};

} // namespace

void
add_exec_command(CLI::App& app, Action& action)
{
  auto command = std::make_shared<ExecCommand>();
  auto* sub = app.add_subcommand("exec", "run a command with the cache environment set (exec, same PID)");
  sub->add_option("--root", command->root, "cache root")->required();
  sub->add_option("command", command->command, "the command and its arguments (after --)")->required();
  sub->callback([command, &action] { action = [command] { return command->run(); }; });
}

} // namespace prewarm::runtime_cli
