// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"

namespace prewarm::cli {

void
add_run_command(CLI::App& app, Action& action)
{
  auto* cmd = app.add_subcommand("run", "not implemented yet");
  cmd->callback([&action] {
    action = [] { return Status(fail(Errc::failed, "'run' is not implemented yet")); };
  });
}

} // namespace prewarm::cli
