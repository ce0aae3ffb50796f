// SPDX-License-Identifier: Apache-2.0
// prewarm: fills GPU kernel caches with representative inferences and packs
// them into a signed bundle. Everything testable lives in the libraries; the
// main() both programs share is frontend/program.hpp.
#include "cli/commands.hpp"
#include "frontend/program.hpp"

int
main(int argc, char** argv)
{
  using namespace prewarm;
  static constexpr frontend::AddCommand k_commands[] = {
    cli::add_keygen_command, cli::add_targets_command, cli::add_plan_command, cli::add_build_command,
    cli::add_merge_command,  cli::add_inspect_command, cli::add_run_command,  cli::add_push_command,
    cli::add_intel_profile_command};
  return frontend::run_program({"prewarm", "prewarm: fill, sign and pack GPU kernel caches", PREWARM_VERSION, k_commands},
                               argc, argv);
}
