// SPDX-License-Identifier: Apache-2.0
#include "registry/credential_helper.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>

extern char** environ;

namespace prewarm::registry {

namespace {

constexpr std::size_t k_max_answer = 64 << 10;

Error
helper_error(const std::string& program, std::string why)
{
  return Error(Errc::usage, fmt::format("{}: {}", program, why), "E_CREDENTIALS");
}

} // namespace

Result<std::string>
run_credential_helper(const std::string& program, const std::string& server, std::chrono::milliseconds timeout)
{
  std::array<int, 2> in{-1, -1};
  std::array<int, 2> out{-1, -1};
  std::array<int, 2> err{-1, -1};
  if (::pipe2(in.data(), O_CLOEXEC) != 0 || ::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0) {
    return fail(helper_error(program, fmt::format("pipe: {}", errno_message(errno))));
  }
  UniqueFd in_write(in[1]);
  UniqueFd out_read(out[0]);
  UniqueFd err_read(err[0]);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  ::posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::array<char*, 3> argv{const_cast<char*>(program.c_str()), const_cast<char*>("get"), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (spawned != 0) {
    return fail(helper_error(program, fmt::format("cannot run it: {} (is it on PATH?)", errno_message(spawned))));
  }
  // The server name is tiny: one write never blocks on an empty pipe.
  const auto written = ::write(in_write.get(), server.data(), server.size());
  in_write.reset();
  (void)written;

  std::string answer;
  std::string diagnostics;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool killed = false;
  std::array<pollfd, 2> fds{pollfd{out_read.get(), POLLIN, 0}, pollfd{err_read.get(), POLLIN, 0}};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || answer.size() > k_max_answer) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) {
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) {
        continue;
      }
      std::array<char, 4096> buffer{};
      const auto n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n <= 0) {
        fds[i].fd = -1;
        continue;
      }
      auto& sink = i == 0 ? answer : diagnostics;
      if (sink.size() < k_max_answer + 1) {
        sink.append(buffer.data(), static_cast<std::size_t>(n));
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (killed) {
    return fail(helper_error(program, fmt::format("no answer within {} ms (killed)", timeout.count())));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return fail(helper_error(program, fmt::format("`{} get` for {} failed (exit {}): {}", program, server,
                                                  WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                                                  trim(diagnostics.empty() ? answer : diagnostics))));
  }
  return answer;
}

} // namespace prewarm::registry
