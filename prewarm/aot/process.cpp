// SPDX-License-Identifier: Apache-2.0
#include "aot/process.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "process/run.hpp"

#include <fmt/format.h>

#include <fcntl.h>

#include <cerrno>

namespace prewarm::aot {

Result<process::Outcome>
run_process(const std::vector<std::string>& argv, const std::filesystem::path& working_directory)
{
  if (argv.empty()) {
    return fail(Errc::internal, "run_process: empty argument list");
  }
  // The output goes to an unlinked-on-exit file in the working directory, not a
  // pipe: a tool that writes megabytes never waits for a reader.
  const auto log_path = working_directory / ".process-output";
  UniqueFd log_fd(::open(log_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!log_fd) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(log_path.string()),
                                          errno_message(errno)));
  }
  process::Spec spec;
  spec.argv = argv;
  spec.working_directory = working_directory;
  spec.output_fd = log_fd.get();
  spec.group = process::ProcessGroup::share_group;
  auto outcome = process::run(spec, {});
  if (!outcome) {
    return fail(Errc::failed, outcome.error().describe(spec));
  }
  auto output = read_file(log_path.string(), std::uint64_t{64} << 20);
  std::error_code ignored;
  std::filesystem::remove(log_path, ignored);
  if (output) {
    outcome->output = std::move(*output);
  }
  return std::move(*outcome);
}

} // namespace prewarm::aot
