// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime: verifies and installs prewarm bundles at container start
// and points applications at the installed caches. It ships in production
// images: it links the runtime libraries only (no signing, no builder code).
#include "base/log.hpp"
#include "frontend/bash_completion.hpp"
#include "frontend/parse_error.hpp"
#include "cli/runtime_commands.hpp"

#include <exception>

int
main(int argc, char** argv)
{
  using namespace prewarm;
  log::set_program_name("prewarm-runtime");
  try {
    CLI::App app("prewarm-runtime: verify and install prewarm bundles; run applications with warm caches",
                 "prewarm-runtime");
    app.require_subcommand(1);
    app.set_version_flag("--version", "prewarm-runtime " PREWARM_VERSION);
    app.add_flag_callback("-v,--verbose", [] { log::set_level(log::Level::verbose); }, "more detail on stderr");
    app.add_flag_callback("-q,--quiet", [] { log::set_level(log::Level::quiet); }, "errors only");
    runtime_cli::Action action;
    runtime_cli::add_verify_command(app, action);
    runtime_cli::add_install_command(app, action);
    runtime_cli::add_env_command(app, action);
    runtime_cli::add_exec_command(app, action);
    runtime_cli::add_status_command(app, action);
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
