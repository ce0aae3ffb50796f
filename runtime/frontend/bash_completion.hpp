// SPDX-License-Identifier: Apache-2.0
// A bash completion script generated from the CLI11 definitions, so it cannot
// drift from the options the program accepts. Hidden subcommands and options
// (empty group) are left out. Installed by `cmake --install` into
// share/bash-completion/completions/<program>.
#pragma once

#include "base/error.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace prewarm::frontend {

// The script for `app` (its name is the program name completed).
std::string bash_completion_script(const CLI::App& app);

// Registers the hidden `completion bash` subcommand that prints the script
// (`completion commands`: the visible subcommands, one per line);
// `action` is main()'s deferred action (see prewarm/cli/commands.hpp).
void add_completion_command(CLI::App& app, std::function<Status()>& action);

} // namespace prewarm::frontend
