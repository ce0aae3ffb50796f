// SPDX-License-Identifier: Apache-2.0
#include "host/subprocess.hpp"

#include "base/files.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace prewarm::host {

namespace {

using Clock = std::chrono::steady_clock;

struct ChildOutcome
{
  std::string output;
  bool timed_out = false;
  bool truncated = false;
  int wait_status = 0;
};

// Reads `read_fd` until EOF or the deadline, then reaps `pid` (killing it
// first when the deadline passed).
ChildOutcome
collect(pid_t pid, int read_fd, std::chrono::milliseconds timeout, std::size_t max_output)
{
  ChildOutcome outcome;
  const auto deadline = Clock::now() + timeout;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      outcome.timed_out = true;
      break;
    }
    pollfd pfd{read_fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      outcome.timed_out = ready == 0;
      break;
    }
    const ssize_t got = ::read(read_fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      break; // EOF: the child closed its end (normally by exiting)
    }
    if (outcome.output.size() + static_cast<std::size_t>(got) > max_output) {
      outcome.truncated = true;
      break;
    }
    outcome.output.append(buffer, static_cast<std::size_t>(got));
  }
  // The exit is waited for with the same deadline (a child may close its
  // output and go on), and after SIGKILL for a short grace only: a process
  // stuck in a driver (uninterruptible sleep) cannot be reaped, and container
  // start must not wait for it.
  const auto reaped = [&](Clock::time_point until) {
    for (;;) {
      const pid_t done = ::waitpid(pid, &outcome.wait_status, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) {
        return true;
      }
      if (Clock::now() >= until) {
        return false;
      }
      ::usleep(2000);
    }
  };
  if (!outcome.timed_out && !outcome.truncated && !reaped(deadline)) {
    outcome.timed_out = true;
  }
  if (outcome.timed_out || outcome.truncated) {
    ::kill(pid, SIGKILL);
    if (!reaped(Clock::now() + std::chrono::seconds(2))) {
      outcome.wait_status = 0; // left behind unreaped: stuck in the kernel
    }
  }
  return outcome;
}

std::string
describe_wait_status(int status)
{
  if (WIFSIGNALED(status)) {
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
  }
  return fmt::format("exit status {}", WEXITSTATUS(status));
}

Result<std::string>
finish(const ChildOutcome& outcome, std::string_view what, std::chrono::milliseconds timeout)
{
  if (outcome.timed_out) {
    return fail(Errc::failed, fmt::format("{}: no result within {} ms (killed)", what, timeout.count()));
  }
  if (outcome.truncated) {
    return fail(Errc::failed, fmt::format("{}: output larger than the limit (killed)", what));
  }
  if (!WIFEXITED(outcome.wait_status) || WEXITSTATUS(outcome.wait_status) != 0) {
    return fail(Errc::failed, fmt::format("{}: {}", what, describe_wait_status(outcome.wait_status)));
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
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return fail(Errc::failed, fmt::format("{}: pipe: {}", argv[0], errno_message(errno)));
  }
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);

  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return fail(Errc::failed, fmt::format("{}: cannot run: {}", argv[0], errno_message(rc)));
  }
  write_end.reset();
  return finish(collect(pid, read_end.get(), timeout, max_output), argv[0], timeout);
}

Result<std::string>
run_isolated(const std::function<std::string()>& work, std::chrono::milliseconds timeout, std::size_t max_output)
{
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return fail(Errc::failed, fmt::format("isolated probe: pipe: {}", errno_message(errno)));
  }
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  const pid_t pid = ::fork();
  if (pid < 0) {
    return fail(Errc::failed, fmt::format("isolated probe: fork: {}", errno_message(errno)));
  }
  if (pid == 0) {
    read_end.reset();
    int status = 0;
    try {
      const std::string out = work();
      std::size_t done = 0;
      while (done < out.size()) {
        const ssize_t put = ::write(write_end.get(), out.data() + done, out.size() - done);
        if (put < 0 && errno == EINTR) {
          continue;
        }
        if (put <= 0) {
          status = 1;
          break;
        }
        done += static_cast<std::size_t>(put);
      }
    } catch (...) {
      status = 1;
    }
    // _exit: no atexit handlers or static destructors of the parent's state
    // (an ICD's teardown is exactly what may crash).
    ::_exit(status);
  }
  write_end.reset();
  return finish(collect(pid, read_end.get(), timeout, max_output), "isolated probe", timeout);
}

} // namespace prewarm::host
