// SPDX-License-Identifier: Apache-2.0
// The main() both command-line programs share: the program name in every
// message, the common flags (--version, -v/--verbose, -q/--quiet), the
// program's subcommands and `completion`, CLI11 parsing with usage errors in
// prewarm's format (parse_error.hpp), then the chosen subcommand's action,
// whose Error becomes the message and the exit code. An exception that
// reaches it is a bug (library code reports failures through Result) and
// exits 1 as an internal error.
#pragma once

#include "base/error.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <span>
#include <string_view>

namespace prewarm::frontend {

// What a subcommand's CLI11 callback stores: the work main() runs after
// parsing, so every failure goes through one error path.
using Action = std::function<Status()>;

// Registers one subcommand on the app (an add_*_command()).
using AddCommand = void (*)(CLI::App& app, Action& action);

struct Program
{
  std::string_view name;        // "prewarm": messages, --version, usage
  std::string_view description; // the first line of --help
  std::string_view version;     // PREWARM_VERSION
  std::span<const AddCommand> commands; // in the order --help lists them
};

// The exit status main() returns.
int run_program(const Program& program, int argc, char** argv);

} // namespace prewarm::frontend
