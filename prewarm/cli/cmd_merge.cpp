// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"

namespace prewarm::cli {

void
add_merge_command(CLI::App& app, Action& action)
{
  auto* cmd = app.add_subcommand("merge", "merge partial bundles (lands with the pack library)");
  cmd->callback([&action] {
    action = [] { return Status(fail(Errc::failed, "'merge' is not implemented yet")); };
  });
}

} // namespace prewarm::cli
