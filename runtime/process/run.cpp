// SPDX-License-Identifier: Apache-2.0
#include "process/run.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace prewarm::process {

namespace {

using Clock = std::chrono::steady_clock;

// What the child reports through the status pipe when it cannot exec.
struct ChildFailure
{
  StartFailure::Step step;
  int error_number;
};

// Async-signal-safe: only used between fork and exec.
[[noreturn]] void
child_fail(int status_fd, StartFailure::Step step)
{
  const ChildFailure failure{step, errno};
  ssize_t ignored = ::write(status_fd, &failure, sizeof failure);
  (void)ignored;
  ::_exit(127);
}

class Pipe
{
public:
  bool open()
  {
    std::array<int, 2> fds{};
    if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
      return false;
    }
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
    return true;
  }
  UniqueFd read_end;
  UniqueFd write_end;
};

// Writes all of `data`; false with errno set when the pipe refuses.
bool
write_all(int fd, const std::string& data)
{
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t put = ::write(fd, data.data() + done, data.size() - done);
    if (put < 0 && errno == EINTR) {
      continue;
    }
    if (put <= 0) {
      return false;
    }
    done += static_cast<std::size_t>(put);
  }
  return true;
}

std::unexpected<StartFailure>
start_failure(StartFailure::Step step, int error_number)
{
  return std::unexpected(StartFailure{step, error_number});
}

int
milliseconds_until(Clock::time_point deadline, int at_most)
{
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, at_most));
}

// Watches one started child until it is gone: its output, the timeout, the
// output cap, the stop request; then ends what it left in its group.
class Supervisor
{
public:
  Supervisor(pid_t pid, ProcessGroup group, int output_fd, const Supervision& supervision, Clock::time_point start)
    : m_pid(pid), m_group(group), m_output_fd(output_fd), m_supervision(supervision), m_start(start),
      m_output_open(output_fd >= 0)
  {
    if (m_output_open) {
      ::fcntl(output_fd, F_SETFL, ::fcntl(output_fd, F_GETFL) | O_NONBLOCK);
    }
  }

  Outcome wait()
  {
    const auto& s = m_supervision;
    const bool has_timeout = s.timeout.count() > 0;
    const auto deadline = m_start + s.timeout;
    Clock::time_point term_deadline{};
    for (;;) {
      // Exit check without reaping: while the child is a zombie its pid (the
      // process group id) cannot be reused, so signalling the group stays safe.
      siginfo_t info{};
      const int waited = ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT);
      if (waited == 0 && info.si_pid == m_pid) {
        break;
      }
      if (waited < 0 && errno == ECHILD) {
        m_lost = true; // reaped behind our back (SIGCHLD ignored): nothing to wait for
        break;
      }
      const auto now = Clock::now();
      if (s.stop_requested && !m_stopped && s.stop_requested()) {
        m_stopped = true;
        kill_now(SIGKILL);
      }
      if (has_timeout && !m_timed_out && now >= deadline) {
        m_timed_out = true;
        if (s.term_grace.count() > 0) {
          signal_child(SIGTERM);
          m_last_signal = SIGTERM;
          term_deadline = now + s.term_grace;
        } else {
          kill_now(SIGKILL);
        }
      } else if (m_timed_out && m_killed_at == Clock::time_point{} && now >= term_deadline) {
        kill_now(SIGKILL);
      }
      if (m_killed_at != Clock::time_point{} && now >= m_killed_at + s.unreaped_grace) {
        m_unreaped = true;
        break;
      }
      int wait_ms = 20;
      if (has_timeout && !m_timed_out) {
        wait_ms = milliseconds_until(deadline, 20);
      } else if (m_timed_out && m_killed_at == Clock::time_point{}) {
        wait_ms = milliseconds_until(term_deadline, 20);
      }
      if (m_output_open) {
        pollfd fds{m_output_fd, POLLIN, 0};
        if (::poll(&fds, 1, std::max(wait_ms, 1)) > 0) {
          drain_once();
        }
      } else {
        // No output to wait on (a file, or closed: usually the program is
        // exiting): poll its exit often, so the measured duration stays
        // close to the real one.
        ::usleep(static_cast<useconds_t>(std::clamp(wait_ms, 1, 5)) * 1000);
      }
    }
    const auto end = Clock::now();

    // Whatever the program left running in its group would go on writing
    // (into a cache directory that is being measured, say).
    if (m_group == ProcessGroup::kill_group && !m_lost) {
      ::kill(-m_pid, SIGKILL);
    }
    if (s.after_exit) {
      s.after_exit();
    }
    int wait_status = 0;
    if (!m_unreaped && !m_lost) {
      while (::waitpid(m_pid, &wait_status, 0) < 0 && errno == EINTR) {
      }
    }
    // Output still in the pipe; a process that left the group (setsid) may
    // hold the write end forever, so the drain is bounded.
    const auto drain_deadline = Clock::now() + std::chrono::seconds(2);
    while (m_output_open && Clock::now() < drain_deadline) {
      pollfd fds{m_output_fd, POLLIN, 0};
      if (::poll(&fds, 1, milliseconds_until(drain_deadline, 100)) > 0) {
        drain_once();
      }
    }

    m_outcome.duration = end - m_start;
    m_outcome.unreaped = m_unreaped;
    if (m_stopped) {
      m_outcome.ending = Outcome::Ending::stopped;
      m_outcome.signal = SIGKILL;
    } else if (m_overflow) {
      m_outcome.ending = Outcome::Ending::output_overflow;
      m_outcome.signal = SIGKILL;
    } else if (m_timed_out) {
      m_outcome.ending = Outcome::Ending::timed_out;
      m_outcome.signal = m_last_signal;
      if (WIFEXITED(wait_status)) {
        m_outcome.exit_status = WEXITSTATUS(wait_status);
      }
    } else if (WIFSIGNALED(wait_status)) {
      m_outcome.ending = Outcome::Ending::signaled;
      m_outcome.signal = WTERMSIG(wait_status);
    } else {
      m_outcome.ending = Outcome::Ending::exited;
      m_outcome.exit_status = WEXITSTATUS(wait_status);
    }
    return std::move(m_outcome);
  }

private:
  void signal_child(int signal_number)
  {
    ::kill(m_group == ProcessGroup::kill_group ? -m_pid : m_pid, signal_number);
  }

  void kill_now(int signal_number)
  {
    signal_child(signal_number);
    m_last_signal = signal_number;
    if (m_killed_at == Clock::time_point{}) {
      m_killed_at = Clock::now();
    }
  }

  // Reads what is available; at EOF (or past the cap) stops reading.
  void drain_once()
  {
    std::array<char, 65536> buffer{};
    for (;;) {
      const ssize_t n = ::read(m_output_fd, buffer.data(), buffer.size());
      if (n > 0) {
        if (!take(buffer.data(), static_cast<std::size_t>(n))) {
          m_output_open = false;
          return;
        }
        if (static_cast<std::size_t>(n) < buffer.size()) {
          return;
        }
        continue;
      }
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      }
      m_output_open = false; // EOF: every writer closed it (normally: the child exited)
      return;
    }
  }

  bool take(const char* data, std::size_t size)
  {
    const auto& s = m_supervision;
    if (m_output_bytes + size > s.max_output) {
      if (!m_overflow) {
        m_overflow = true;
        kill_now(SIGKILL);
      }
      return false;
    }
    m_output_bytes += size;
    if (s.on_output) {
      s.on_output(data, size);
    } else {
      m_outcome.output.append(data, size);
    }
    return true;
  }

  pid_t m_pid;
  ProcessGroup m_group;
  int m_output_fd;
  const Supervision& m_supervision;
  Clock::time_point m_start;
  bool m_output_open;
  std::size_t m_output_bytes = 0;
  bool m_timed_out = false;
  bool m_stopped = false;
  bool m_overflow = false;
  bool m_unreaped = false;
  bool m_lost = false;
  int m_last_signal = 0;
  Clock::time_point m_killed_at{};
  Outcome m_outcome;
};

} // namespace

std::string
Outcome::describe(std::chrono::milliseconds timeout) const
{
  switch (ending) {
  case Ending::exited:
    return fmt::format("exited with status {}", exit_status);
  case Ending::signaled:
    return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  case Ending::timed_out:
    if (timeout.count() == 0) {
      return "timed out";
    }
    return fmt::format("timed out after {:.1f} s ({})", std::chrono::duration<double>(timeout).count(),
                       signal == SIGKILL ? "killed with SIGKILL" : "stopped with SIGTERM");
  case Ending::output_overflow:
    return "killed: more output than the limit";
  case Ending::stopped:
    return "stopped on request";
  }
  return "ended";
}

std::string
StartFailure::describe(const Spec& spec) const
{
  // run_in_child() has no program to name.
  const std::string program = spec.argv.empty() ? std::string("a child process") : in_quotes(spec.argv.front());
  const std::string to_run = spec.argv.empty() ? std::string() : " to run " + program;
  switch (step) {
  case Step::pipe:
    return fmt::format("cannot create a pipe{}: {}", to_run, errno_message(error_number));
  case Step::standard_input:
    return fmt::format("cannot pass standard input{}: {}", to_run, errno_message(error_number));
  case Step::fork:
    return fmt::format("cannot fork{}: {}", to_run, errno_message(error_number));
  case Step::standard_streams:
    return fmt::format("cannot set up standard streams for {}: {}", program, errno_message(error_number));
  case Step::working_directory:
    return fmt::format("cannot enter working directory {}: {}", in_quotes(spec.working_directory.string()),
                       errno_message(error_number));
  case Step::exec:
    return fmt::format("cannot run {}: {}", program, errno_message(error_number));
  }
  return "cannot start " + program;
}

namespace {

// What the child of run() does between fork and exec, all of it prepared
// before fork: only async-signal-safe calls here.
struct ChildSetup
{
  bool own_group;
  int input_source; // -1: /dev/null
  int output_target;
  StderrTo stderr_to;
  int stderr_fd;
  const char* working_directory; // "": inherit
  char** environment;            // null: inherit
  char** argv;
  int status_fd;
};

[[noreturn]] void
exec_child(const ChildSetup& setup)
{
  if (setup.own_group) {
    ::setpgid(0, 0);
  }
  sigset_t all;
  ::sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  const int in = setup.input_source >= 0 ? setup.input_source : ::open("/dev/null", O_RDONLY);
  if (in < 0 || ::dup2(in, STDIN_FILENO) < 0 || ::dup2(setup.output_target, STDOUT_FILENO) < 0) {
    child_fail(setup.status_fd, StartFailure::Step::standard_streams);
  }
  if (setup.stderr_to == StderrTo::descriptor) {
    if (::dup2(setup.stderr_fd, STDERR_FILENO) < 0) {
      child_fail(setup.status_fd, StartFailure::Step::standard_streams);
    }
  } else if (setup.stderr_to == StderrTo::null) {
    const int null_out = ::open("/dev/null", O_WRONLY);
    if (null_out < 0 || ::dup2(null_out, STDERR_FILENO) < 0) {
      child_fail(setup.status_fd, StartFailure::Step::standard_streams);
    }
  } else if (::dup2(setup.output_target, STDERR_FILENO) < 0) {
    child_fail(setup.status_fd, StartFailure::Step::standard_streams);
  }
  if (setup.working_directory[0] != '\0' && ::chdir(setup.working_directory) != 0) {
    child_fail(setup.status_fd, StartFailure::Step::working_directory);
  }
  // execvp looks argv[0] up in `environ`'s PATH: the child's PATH, which is
  // what someone reading a manifest expects.
  if (setup.environment != nullptr) {
    environ = setup.environment;
  }
  ::execvp(setup.argv[0], setup.argv);
  child_fail(setup.status_fd, StartFailure::Step::exec);
}

} // namespace

std::expected<Outcome, StartFailure>
run(const Spec& spec, const Supervision& supervision)
{
  if (spec.argv.empty()) {
    return start_failure(StartFailure::Step::exec, EINVAL);
  }
  // Everything the child needs is built before fork: between fork and exec
  // only async-signal-safe calls are allowed.
  std::vector<std::string> words = spec.argv;
  std::vector<char*> argv_pointers;
  for (auto& w : words) {
    argv_pointers.push_back(w.data());
  }
  argv_pointers.push_back(nullptr);
  std::vector<std::string> env_entries;
  std::vector<char*> env_pointers;
  if (spec.environment) {
    env_entries = environment_entries(*spec.environment);
    for (auto& e : env_entries) {
      env_pointers.push_back(e.data());
    }
    env_pointers.push_back(nullptr);
  }
  const std::string working_directory = spec.working_directory.string();
  const bool own_group = spec.group == ProcessGroup::kill_group;

  Pipe output;
  if (spec.output_fd < 0 && !output.open()) {
    return start_failure(StartFailure::Step::pipe, errno);
  }
  Pipe status;
  if (!status.open()) {
    return start_failure(StartFailure::Step::pipe, errno);
  }
  const int output_target = spec.output_fd >= 0 ? spec.output_fd : output.write_end.get();
  // The input goes into the pipe now: a pipe holds 64 KiB, so this write
  // never waits for a reader.
  Pipe input;
  if (!spec.standard_input.empty()) {
    if (spec.standard_input.size() > 65536) {
      return start_failure(StartFailure::Step::standard_input, E2BIG);
    }
    if (!input.open()) {
      return start_failure(StartFailure::Step::pipe, errno);
    }
    if (!write_all(input.write_end.get(), spec.standard_input)) {
      return start_failure(StartFailure::Step::standard_input, errno);
    }
    input.write_end.reset();
  }
  const int input_source = input.read_end ? input.read_end.get() : -1;

  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return start_failure(StartFailure::Step::fork, errno);
  }
  if (pid == 0) {
    exec_child(ChildSetup{own_group, input_source, output_target, spec.stderr_to, spec.stderr_fd,
                          working_directory.c_str(), env_pointers.empty() ? nullptr : env_pointers.data(),
                          argv_pointers.data(), status.write_end.get()});
  }

  // Parent. setpgid on both sides closes the race with an early kill().
  if (own_group) {
    ::setpgid(pid, pid);
  }
  output.write_end.reset();
  status.write_end.reset();
  ChildFailure failure{};
  ssize_t got = 0;
  do {
    got = ::read(status.read_end.get(), &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    int ignored = 0;
    while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
    }
    return start_failure(failure.step, failure.error_number);
  }
  Supervisor supervisor(pid, spec.group, output.read_end ? output.read_end.get() : -1, supervision, start);
  return supervisor.wait();
}

std::expected<Outcome, StartFailure>
run_in_child(const std::function<std::string()>& work, const Supervision& supervision)
{
  Pipe output;
  if (!output.open()) {
    return start_failure(StartFailure::Step::pipe, errno);
  }
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return start_failure(StartFailure::Step::fork, errno);
  }
  if (pid == 0) {
    output.read_end.reset();
    int exit_status = 0;
    try {
      if (!write_all(output.write_end.get(), work())) {
        exit_status = 1;
      }
    } catch (...) {
      exit_status = 1;
    }
    // _exit: no atexit handlers or static destructors of the parent's state
    // (a driver's teardown is exactly what may crash).
    ::_exit(exit_status);
  }
  output.write_end.reset();
  Supervisor supervisor(pid, ProcessGroup::share_group, output.read_end.get(), supervision, start);
  return supervisor.wait();
}

} // namespace prewarm::process
