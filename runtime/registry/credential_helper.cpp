// SPDX-License-Identifier: Apache-2.0
#include "registry/credential_helper.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "process/run.hpp"

#include <fmt/format.h>

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace prewarm::registry {

namespace {

constexpr std::size_t k_max_answer = 64 << 10;

Error
helper_error(const std::string& program, std::string why)
{
  return Error(Errc::usage, fmt::format("{}: {}", program, why), "E_CREDENTIALS");
}

// What the helper wrote to stderr (the first 4 KiB): its reason for failing.
std::string
read_back(int fd)
{
  std::array<char, 4096> buffer{};
  const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), 0);
  return n > 0 ? std::string(buffer.data(), static_cast<std::size_t>(n)) : std::string();
}

} // namespace

Result<std::string>
run_credential_helper(const std::string& program, const std::string& server, std::chrono::milliseconds timeout)
{
  // stderr apart from the JSON answer on stdout, in memory.
  UniqueFd diagnostics(::memfd_create("credential-helper-stderr", MFD_CLOEXEC));
  if (!diagnostics) {
    return fail(helper_error(program, fmt::format("memfd_create: {}", errno_message(errno))));
  }
  process::Spec spec;
  spec.argv = {program, "get"};
  spec.standard_input = server;
  spec.stderr_to = process::StderrTo::descriptor;
  spec.stderr_fd = diagnostics.get();
  spec.group = process::ProcessGroup::kill_group;
  process::Supervision supervision;
  supervision.timeout = timeout;
  supervision.max_output = k_max_answer;
  const auto outcome = process::run(spec, supervision);
  if (!outcome) {
    return fail(helper_error(program, fmt::format("{} (is it on PATH?)", outcome.error().describe(spec))));
  }
  using Ending = process::Outcome::Ending;
  switch (outcome->ending) {
  case Ending::timed_out:
  case Ending::stopped:
    return fail(helper_error(program, fmt::format("no answer within {} ms (killed)", timeout.count())));
  case Ending::output_overflow:
    return fail(helper_error(program, fmt::format("an answer over {} bytes (killed)", k_max_answer)));
  case Ending::signaled:
  case Ending::exited:
    break;
  }
  if (outcome->ending != Ending::exited || outcome->exit_status != 0) {
    const std::string why = read_back(diagnostics.get());
    return fail(helper_error(program, fmt::format("`{} get` for {} failed (exit {}): {}", program, server,
                                                  outcome->ending == Ending::exited ? outcome->exit_status : -1,
                                                  trim(why.empty() ? outcome->output : why))));
  }
  return outcome->output;
}

} // namespace prewarm::registry
