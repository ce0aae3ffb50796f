// SPDX-License-Identifier: Apache-2.0
#include "host/subprocess.hpp"

#include "process/run.hpp"

#include <fmt/format.h>

#include <cstring>
#include <csignal>

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

Result<std::string>
finish(const process::Outcome& outcome, std::string_view what, std::chrono::milliseconds timeout)
{
  using Ending = process::Outcome::Ending;
  switch (outcome.ending) {
  case Ending::timed_out:
  case Ending::stopped:
    return fail(Errc::failed, fmt::format("{}: no result within {} ms (killed)", what, timeout.count()));
  case Ending::output_overflow:
    return fail(Errc::failed, fmt::format("{}: output larger than the limit (killed)", what));
  case Ending::signaled:
    return fail(Errc::failed, fmt::format("{}: killed by signal {} ({})", what, outcome.signal, ::strsignal(outcome.signal)));
  case Ending::exited:
    if (outcome.exit_status != 0) {
      return fail(Errc::failed, fmt::format("{}: exit status {}", what, outcome.exit_status));
    }
    break;
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
