// SPDX-License-Identifier: Apache-2.0
// prewarm: fills GPU kernel caches with representative inferences and packs
// them into a signed bundle. Everything testable lives in the libraries.
#include "base/log.hpp"
#include "frontend/bash_completion.hpp"
#include "frontend/parse_error.hpp"
#include "cli/commands.hpp"

#include <exception>

int
main(int argc, char** argv)
{
  using namespace prewarm;
  log::set_program_name("prewarm");
  try {
    CLI::App app("prewarm: fill, sign and pack GPU kernel caches", "prewarm");
    app.require_subcommand(1);
    app.set_version_flag("--version", "prewarm " PREWARM_VERSION);
    app.add_flag_callback("-v,--verbose", [] { log::set_level(log::Level::verbose); }, "more detail on stderr");
    app.add_flag_callback("-q,--quiet", [] { log::set_level(log::Level::quiet); }, "errors only");
    cli::Action action;
    cli::add_keygen_command(app, action);
    cli::add_targets_command(app, action);
    cli::add_plan_command(app, action);
    cli::add_build_command(app, action);
    cli::add_merge_command(app, action);
    cli::add_inspect_command(app, action);
    cli::add_run_command(app, action);
    cli::add_push_command(app, action);
    frontend::add_completion_command(app, action);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return frontend::report_parse_error(app, e);
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
