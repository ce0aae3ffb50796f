// SPDX-License-Identifier: Apache-2.0
#include "process/supervise.hpp"

#include "base/files.hpp"
#include "base/log.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace prewarm::process {

namespace {

volatile sig_atomic_t g_child = 0;

void
forward_signal(int signal_number)
{
  if (g_child > 0) {
    ::kill(static_cast<pid_t>(g_child), signal_number);
  }
}

constexpr int k_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

// The main child's status. As PID 1, every other child that ends meanwhile
// (orphans the kernel re-parents to init) is reaped too, and the ones that
// already ended when the main child does.
int
wait_for(pid_t child)
{
  const bool init = ::getpid() == 1;
  int status = 0;
  for (;;) {
    int st = 0;
    const pid_t pid = ::waitpid(init ? -1 : child, &st, 0);
    if (pid < 0) {
      if (errno == EINTR) {
        continue;
      }
      break; // ECHILD: nothing left to wait for (cannot happen before the child)
    }
    if (pid == child) {
      status = st;
      break;
    }
  }
  while (init && ::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  return status;
}

} // namespace

void
replace_process(const std::vector<std::string>& argv)
{
  std::vector<char*> pointers;
  for (const auto& a : argv) {
    pointers.push_back(const_cast<char*>(a.c_str()));
  }
  pointers.push_back(nullptr);
  ::execvp(pointers[0], pointers.data());
  const int e = errno;
  log::error("cannot run {}: {}", argv.front(), errno_message(e));
  std::_Exit(e == ENOENT ? 127 : 126);
}

Result<int>
run_forwarding_signals(const std::vector<std::string>& argv)
{
  struct sigaction action{};
  action.sa_handler = forward_signal;
  ::sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  // Blocked across fork(): a signal that arrives before the parent knows
  // the child's PID is delivered (and forwarded) once it does.
  sigset_t forwarded;
  sigset_t previous;
  ::sigemptyset(&forwarded);
  for (const int s : k_forwarded_signals) {
    ::sigaction(s, &action, nullptr);
    ::sigaddset(&forwarded, s);
  }
  ::sigprocmask(SIG_BLOCK, &forwarded, &previous);
  const pid_t child = ::fork();
  if (child < 0) {
    const int e = errno;
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    return fail(Errc::failed, fmt::format("cannot fork ({})", errno_message(e)));
  }
  if (child == 0) {
    struct sigaction defaults{};
    defaults.sa_handler = SIG_DFL;
    for (const int s : k_forwarded_signals) {
      ::sigaction(s, &defaults, nullptr);
    }
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    replace_process(argv);
  }
  g_child = child;
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  return wait_for(child);
}

void
exit_as(int wait_status)
{
  if (WIFSIGNALED(wait_status)) {
    const int s = WTERMSIG(wait_status);
    ::signal(s, SIG_DFL);
    ::raise(s);
    std::_Exit(128 + s);
  }
  std::exit(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 1);
}

} // namespace prewarm::process
