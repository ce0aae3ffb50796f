// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"

namespace prewarm::cli {

void
add_keygen_command(CLI::App& app, Action& action)
{
  auto* cmd = app.add_subcommand("keygen", "not implemented yet");
  cmd->callback([&action] {
    action = [] { return Status(fail(Errc::failed, "'keygen' is not implemented yet")); };
  });
}

} // namespace prewarm::cli
