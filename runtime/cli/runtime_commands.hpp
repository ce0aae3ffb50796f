// SPDX-License-Identifier: Apache-2.0
// The `prewarm-runtime` subcommands, one cmd_<name>.cpp each. As in the
// builder's CLI: a subcommand's callback stores its work in `action`; main()
// runs it after parsing, so every failure goes through one error path.
#pragma once

#include "base/error.hpp"
#include "install/application_environment.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace prewarm::runtime_cli {

// What a command did: a category for the exit code, or a specific exit
// status (exec: the command could not be started, 126/127 like env(1)).
using Action = std::function<Status()>;

void add_verify_command(CLI::App& app, Action& action);  // cmd_verify.cpp
void add_install_command(CLI::App& app, Action& action); // cmd_install.cpp
void add_env_command(CLI::App& app, Action& action);     // cmd_env.cpp
void add_exec_command(CLI::App& app, Action& action);    // cmd_exec.cpp
void add_status_command(CLI::App& app, Action& action);  // cmd_status.cpp

// Options verify and install share: --trust, --expiry, --clock-skew.
// --trust is a .pub file or a trust policy (.yaml, bundle/trust_policy.hpp);
// --expiry / --clock-skew left empty take the policy's values.
struct TrustOptions
{
  std::string trust_file;
  std::string expiry;     // "", "enforce", "warn"
  std::string clock_skew; // "" or a duration
};
void add_trust_options(CLI::App& command, TrustOptions& options);

// env and exec: --paths version|root (install/application_environment.hpp ExportedPaths);
// both in cmd_env.cpp.
void add_paths_option(CLI::App& command, std::string& paths);
install::ExportedPaths exported_paths(const std::string& paths);

} // namespace prewarm::runtime_cli
