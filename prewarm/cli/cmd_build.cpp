// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"

namespace prewarm::cli {

void
add_build_command(CLI::App& app, Action& action)
{
  auto* cmd = app.add_subcommand("build", "not implemented yet");
  cmd->callback([&action] {
    action = [] { return Status(fail(Errc::failed, "'build' is not implemented yet")); };
  });
}

} // namespace prewarm::cli
