// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime: verifies and installs prewarm bundles at container start
// and points applications at the installed caches. It ships in production
// images: it links the runtime libraries only (no signing, no builder code).
// The main() both programs share is frontend/program.hpp.
#include "cli/runtime_commands.hpp"
#include "frontend/program.hpp"

int
main(int argc, char** argv)
{
  using namespace prewarm;
  static constexpr frontend::AddCommand k_commands[] = {
    runtime_cli::add_verify_command, runtime_cli::add_install_command, runtime_cli::add_env_command,
    runtime_cli::add_exec_command, runtime_cli::add_status_command};
  return frontend::run_program({"prewarm-runtime",
                                "prewarm-runtime: verify and install prewarm bundles; run applications with warm caches",
                                PREWARM_VERSION, k_commands},
                               argc, argv);
}
