// SPDX-License-Identifier: Apache-2.0
#include "frontend/program.hpp"

#include "base/log.hpp"
#include "frontend/bash_completion.hpp"
#include "frontend/parse_error.hpp"

#include <exception>
#include <string>

namespace prewarm::frontend {

int
run_program(const Program& program, int argc, char** argv)
{
  const std::string name(program.name);
  log::set_program_name(name);
  try {
    CLI::App app(std::string(program.description), name);
    app.require_subcommand(1);
    app.set_version_flag("--version", name + " " + std::string(program.version));
    app.add_flag_callback(
      "-v,--verbose", [] { log::set_level(log::Level::verbose); }, "more detail on stderr");
    app.add_flag_callback(
      "-q,--quiet", [] { log::set_level(log::Level::quiet); }, "errors only");
    Action action;
    for (const auto add_command : program.commands) {
      add_command(app, action);
    }
    add_completion_command(app, action);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return report_parse_error(app, e);
    }
    if (const auto status = action(); !status) {
      log::error("{}", status.error().describe());
      return exit_code(status.error().category());
    }
    return 0;
  } catch (const std::exception& e) {
    // Reaching this is a bug: library code reports failures through Result.
    log::write("internal error", e.what());
    return 1;
  }
}

} // namespace prewarm::frontend
