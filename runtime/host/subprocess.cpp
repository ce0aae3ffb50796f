// SPDX-License-Identifier: Apache-2.0
#include "host/subprocess.hpp"

#include "process/run.hpp"

#include <fmt/format.h>


namespace prewarm::host {

namespace {

// Probes are killed at once at the deadline (no SIGTERM grace: container
// start must not wait), and a child stuck in a driver is left behind.
process::Supervision
probe_supervision(std::chrono::milliseconds timeout, std::size_t max_output)
{
  process::Supervision supervision;
  supervision.timeout = timeout;
  supervision.max_output = max_output;
  return supervision;
}

// Anything but a clean exit is an error saying how it ended (process/run.hpp
// words it, as for every runner).
Result<std::string>
finish(const process::Outcome& outcome, std::string_view what, std::chrono::milliseconds timeout)
{
  if (!outcome.succeeded()) {
    return fail(Errc::failed, fmt::format("{}: {}", what, outcome.describe(timeout)));
  }
  return outcome.output;
}

} // namespace

Result<std::string>
run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, std::size_t max_output)
{
  if (argv.empty()) {
    return fail(Errc::internal, "run_command: empty argv");
  }
  process::Spec spec;
  spec.argv = argv;
  spec.stderr_to = process::StderrTo::null;
  spec.group = process::ProcessGroup::share_group;
  auto outcome = process::run(spec, probe_supervision(timeout, max_output));
  if (!outcome) {
    return fail(Errc::failed, fmt::format("{}: {}", argv[0], outcome.error().describe(spec)));
  }
  return finish(*outcome, argv[0], timeout);
}

Result<std::string>
run_isolated(const std::function<std::string()>& work, std::chrono::milliseconds timeout, std::size_t max_output)
{
  auto outcome = process::run_in_child(work, probe_supervision(timeout, max_output));
  if (!outcome) {
    return fail(Errc::failed, fmt::format("isolated probe: {}", outcome.error().describe({})));
  }
  return finish(*outcome, "isolated probe", timeout);
}

} // namespace prewarm::host
