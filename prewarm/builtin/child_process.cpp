// SPDX-License-Identifier: Apache-2.0
#include "builtin/child_process.hpp"

#include "base/files.hpp"
#include "jobs/interruption.hpp"
#include "process/run.hpp"

#include <fcntl.h>

#include <fmt/format.h>

#include <cerrno>
#include <fstream>

namespace prewarm::builtin {

Result<process::Outcome>
run_child(const ChildSpec& spec)
{
  if (spec.argv.empty()) {
    return fail(Errc::internal, "run_child: empty argv");
  }
  const int log_fd = ::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", spec.log_file.string(), errno_message(errno)));
  }
  UniqueFd log(log_fd);

  process::Spec child;
  child.argv = spec.argv;
  child.environment = spec.environment;
  child.working_directory = spec.working_directory;
  child.output_fd = log.get();
  child.group = process::ProcessGroup::share_group;
  process::Supervision supervision;
  supervision.timeout = spec.timeout;
  // SIGTERM to the builder must stop the job within 20 ms.
  supervision.stop_requested = [] { return jobs::interruption_signal() != 0; };
  auto outcome = process::run(child, supervision);
  if (!outcome) {
    return fail(Errc::failed, outcome.error().describe(child));
  }
  if (outcome->ending == process::Outcome::Ending::stopped) {
    return fail(jobs::interrupted_error(spec.argv[0]));
  }
  return std::move(*outcome);
}

std::string
file_tail(const std::filesystem::path& path, std::size_t max_bytes)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return {};
  }
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

Result<std::filesystem::path>
self_executable()
{
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot resolve /proc/self/exe: {}", ec.message()));
  }
  return path;
}

} // namespace prewarm::builtin
