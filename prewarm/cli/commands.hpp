// SPDX-License-Identifier: Apache-2.0
// The `prewarm` subcommands. Each add_*_command() in its own cmd_<name>.cpp
// registers one subcommand on `app`; when that subcommand is chosen, CLI11
// runs its callback, which stores the work to do in `action`. main() runs it
// after parsing, so every failure goes through one error path.
#pragma once

#include "base/error.hpp"

#include <CLI/CLI.hpp>

#include <functional>

namespace prewarm::cli {

using Action = std::function<Status()>;

void add_keygen_command(CLI::App& app, Action& action);   // cmd_keygen.cpp
void add_targets_command(CLI::App& app, Action& action);  // cmd_targets.cpp
void add_plan_command(CLI::App& app, Action& action);     // cmd_plan.cpp
void add_build_command(CLI::App& app, Action& action);    // cmd_build.cpp
void add_merge_command(CLI::App& app, Action& action);    // cmd_merge.cpp
void add_inspect_command(CLI::App& app, Action& action);  // cmd_inspect.cpp
void add_run_command(CLI::App& app, Action& action);      // cmd_run.cpp
void add_push_command(CLI::App& app, Action& action);     // cmd_push.cpp
void add_intel_profile_command(CLI::App& app, Action& action); // cmd_intel_profile.cpp

} // namespace prewarm::cli
