// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"

namespace prewarm::cli {

void
add_plan_command(CLI::App& app, Action& action)
{
  auto* cmd = app.add_subcommand("plan", "not implemented yet");
  cmd->callback([&action] {
    action = [] { return Status(fail(Errc::failed, "'plan' is not implemented yet")); };
  });
}

} // namespace prewarm::cli
