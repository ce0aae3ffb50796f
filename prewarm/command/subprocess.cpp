// SPDX-License-Identifier: Apache-2.0
#include "command/subprocess.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "command/interruption.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace prewarm::command {

namespace {

using Clock = std::chrono::steady_clock;

// What the child reports through the status pipe when it cannot exec.
struct ChildFailure
{
  int stage; // 1: chdir, 2: exec, 3: stdin
  int error_number;
};

// Async-signal-safe: only used between fork and exec.
[[noreturn]] void
child_fail(int status_fd, int stage)
{
  const ChildFailure failure{stage, errno};
  ssize_t ignored = ::write(status_fd, &failure, sizeof failure);
  (void)ignored;
  ::_exit(127);
}

class OutputSink
{
public:
  OutputSink(int log_fd, std::string log_path, std::size_t tail_bytes, std::uint64_t log_cap)
    : m_log_fd(log_fd), m_log_path(std::move(log_path)), m_tail_bytes(tail_bytes), m_log_head_cap(log_cap / 2),
      m_log_tail_cap(log_cap - log_cap / 2)
  {
  }

  void append(const char* const all, const std::size_t all_size)
  {
    const char* data = all;
    std::size_t size = all_size;
    if (m_log_written < m_log_head_cap) {
      const auto head = static_cast<std::size_t>(std::min<std::uint64_t>(size, m_log_head_cap - m_log_written));
      write_log(data, head);
      data += head;
      size -= head;
    }
    if (size > 0) {
      // Past the head: keep only the last m_log_tail_cap bytes for the end.
      m_log_dropped += size;
      m_log_tail.append(data, size);
      if (m_log_tail.size() > 2 * m_log_tail_cap + 4096) {
        m_log_tail.erase(0, m_log_tail.size() - m_log_tail_cap);
      }
    }
    m_tail.append(all, all_size);
    if (m_tail.size() > 2 * m_tail_bytes + 4096) {
      m_tail.erase(0, m_tail.size() - m_tail_bytes);
    }
  }

  // The end of the output, after a line saying how much of the middle was
  // not logged.
  void finish_log()
  {
    if (m_log_tail.size() > m_log_tail_cap) {
      m_log_tail.erase(0, m_log_tail.size() - m_log_tail_cap);
    }
    const std::uint64_t dropped = m_log_dropped - m_log_tail.size();
    if (dropped > 0) {
      const auto note = fmt::format("\n[prewarm: {} bytes of output dropped here: the log keeps the first and the "
                                    "last {} bytes]\n",
                                    dropped, m_log_head_cap);
      write_log(note.data(), note.size());
    }
    write_log(m_log_tail.data(), m_log_tail.size());
    m_log_tail.clear();
  }

  std::string take_tail()
  {
    if (m_tail.size() > m_tail_bytes) {
      m_tail.erase(0, m_tail.size() - m_tail_bytes);
    }
    return std::move(m_tail);
  }

private:
  void write_log(const char* data, std::size_t size)
  {
    if (m_log_fd < 0 || m_log_failed) {
      return;
    }
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(m_log_fd, data + done, size - done);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        // Keep running the program: the log is for people, the tail still
        // carries the end of the output into the report.
        log::warn("cannot write log {}: {}", in_quotes(m_log_path), errno_message(errno));
        m_log_failed = true;
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    m_log_written += size;
  }

  int m_log_fd;
  std::string m_log_path;
  std::size_t m_tail_bytes;
  std::uint64_t m_log_head_cap;
  std::uint64_t m_log_tail_cap;
  std::uint64_t m_log_written = 0;
  std::uint64_t m_log_dropped = 0;
  std::string m_log_tail;
  bool m_log_failed = false;
  std::string m_tail;
};

constexpr std::string_view k_session_variable = "PREWARM_COMMAND_SESSION";

// Whether /proc/PID/environ holds `entry` ("NAME=value").
bool
environment_holds(const std::string& pid, const std::string& entry)
{
  const int fd = ::open(("/proc/" + pid + "/environ").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  std::string text;
  std::array<char, 65536> buffer{};
  for (ssize_t n; text.size() < (std::size_t{4} << 20) && (n = ::read(fd, buffer.data(), buffer.size())) > 0;) {
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find('\0', at);
    if (std::string_view(text).substr(at, end == std::string::npos ? std::string::npos : end - at) == entry) {
      return true;
    }
    if (end == std::string::npos) {
      break;
    }
    at = end + 1;
  }
  return false;
}

// SIGKILL to every process (other than this one) whose environment carries
// `entry`, a few rounds, since one being killed may have just forked.
void
kill_session(const std::string& entry)
{
  const std::string self = std::to_string(::getpid());
  for (int round = 0; round < 5; ++round) {
    int found = 0;
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/proc", ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
      const auto name = it->path().filename().string();
      if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
          name == self) {
        continue;
      }
      if (environment_holds(name, entry)) {
        ::kill(static_cast<pid_t>(std::stol(name)), SIGKILL);
        ++found;
      }
    }
    if (found == 0) {
      return;
    }
    ::usleep(10'000);
  }
}

// Reads what is available; returns false at EOF.
bool
drain_once(int fd, OutputSink& sink)
{
  std::array<char, 65536> buffer{};
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      sink.append(buffer.data(), static_cast<std::size_t>(n));
      if (static_cast<std::size_t>(n) < buffer.size()) {
        return true;
      }
      continue;
    }
    if (n == 0) {
      return false;
    }
    if (errno == EINTR) {
      continue;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

int
milliseconds_until(Clock::time_point deadline)
{
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, 100));
}

bool
needs_quoting(const std::string& word)
{
  if (word.empty()) {
    return true;
  }
  return !std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::strchr("_./=:,+-@%{}", c) != nullptr;
  });
}

} // namespace

Environment
inherited_environment()
{
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      continue;
    }
    env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return env;
}

std::string
quote_argv(const std::vector<std::string>& argv)
{
  std::string line;
  for (const auto& word : argv) {
    if (!line.empty()) {
      line += ' ';
    }
    if (!needs_quoting(word)) {
      line += word;
      continue;
    }
    line += '\'';
    for (const char c : word) {
      if (c == '\'') {
        line += "'\\''";
      } else {
        line += c;
      }
    }
    line += '\'';
  }
  return line;
}

std::string
SubprocessResult::describe(std::chrono::milliseconds timeout) const
{
  switch (ending) {
  case Ending::exited:
    return fmt::format("exited with status {}", exit_status);
  case Ending::signaled:
    return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  case Ending::timed_out:
    return fmt::format("timed out after {:.1f} s (stopped with {})",
                       std::chrono::duration<double>(timeout).count(),
                       signal == SIGKILL ? "SIGKILL" : "SIGTERM");
  }
  return "ended";
}

Result<SubprocessResult>
run_subprocess(const SubprocessSpec& spec)
{
  if (spec.argv.empty()) {
    return fail(Errc::usage, "cannot run a command with an empty argv");
  }
  std::vector<std::string> words;
  if (spec.shell == ShellMode::via_shell) {
    words = {"/bin/sh", "-c"};
  }
  words.insert(words.end(), spec.argv.begin(), spec.argv.end());

  // Everything the child needs is built before fork: between fork and exec
  // only async-signal-safe calls are allowed.
  std::vector<char*> argv_pointers;
  for (auto& w : words) {
    argv_pointers.push_back(w.data());
  }
  argv_pointers.push_back(nullptr);
  std::vector<std::string> env_entries;
  env_entries.reserve(spec.environment.size());
  for (const auto& [name, value] : spec.environment) {
    env_entries.push_back(name + "=" + value);
  }
  std::vector<char*> env_pointers;
  for (auto& e : env_entries) {
    env_pointers.push_back(e.data());
  }
  // Marks every process of this run, whatever session or group it moves to.
  static std::atomic<unsigned> runs{0};
  const std::string session_entry =
    fmt::format("{}={}-{}-{}", k_session_variable, ::getpid(), runs.fetch_add(1), Clock::now().time_since_epoch().count());
  std::string session_entry_copy = session_entry;
  env_pointers.push_back(session_entry_copy.data());
  env_pointers.push_back(nullptr);
  const std::string working_directory = spec.working_directory.string();

  UniqueFd log_fd;
  if (!spec.log_file.empty()) {
    log_fd.reset(::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (!log_fd) {
      return fail(Errc::failed, fmt::format("cannot open log file {}: {}", in_quotes(spec.log_file.string()),
                                            errno_message(errno)));
    }
  }
  std::array<int, 2> output_pipe{};
  std::array<int, 2> status_pipe{};
  if (::pipe2(output_pipe.data(), O_CLOEXEC) != 0) {
    return fail(Errc::failed, fmt::format("cannot create a pipe: {}", errno_message(errno)));
  }
  UniqueFd output_read(output_pipe[0]);
  UniqueFd output_write(output_pipe[1]);
  if (::pipe2(status_pipe.data(), O_CLOEXEC) != 0) {
    return fail(Errc::failed, fmt::format("cannot create a pipe: {}", errno_message(errno)));
  }
  UniqueFd status_read(status_pipe[0]);
  UniqueFd status_write(status_pipe[1]);

  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return fail(Errc::failed, fmt::format("cannot fork: {}", errno_message(errno)));
  }
  if (pid == 0) {
    // Child. Its own process group, so that a timeout stops everything it
    // started, not only the first process.
    ::setpgid(0, 0);
    sigset_t all;
    ::sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0) {
      child_fail(status_write.get(), 3);
    }
    if (::dup2(output_write.get(), STDOUT_FILENO) < 0 || ::dup2(output_write.get(), STDERR_FILENO) < 0) {
      child_fail(status_write.get(), 3);
    }
    if (!working_directory.empty() && ::chdir(working_directory.c_str()) != 0) {
      child_fail(status_write.get(), 1);
    }
    // execvp looks argv[0] up in `environ`'s PATH: the child's PATH, which is
    // what someone reading the manifest expects.
    environ = env_pointers.data();
    ::execvp(argv_pointers[0], argv_pointers.data());
    child_fail(status_write.get(), 2);
  }

  // Parent. setpgid on both sides closes the race with an early kill().
  ::setpgid(pid, pid);
  output_write.reset();
  status_write.reset();

  ChildFailure failure{};
  ssize_t got = 0;
  do {
    got = ::read(status_read.get(), &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    int ignored = 0;
    ::waitpid(pid, &ignored, 0);
    const char* what = failure.stage == 1 ? "cannot enter working directory"
                       : failure.stage == 2 ? "cannot run"
                                            : "cannot set up standard streams for";
    const std::string object = failure.stage == 1 ? working_directory : words.front();
    return fail(Errc::failed,
                fmt::format("{} {}: {}", what, in_quotes(object), errno_message(failure.error_number)));
  }

  ::fcntl(output_read.get(), F_SETFL, ::fcntl(output_read.get(), F_GETFL) | O_NONBLOCK);
  OutputSink sink(log_fd.get(), spec.log_file.string(), spec.tail_bytes, spec.log_cap_bytes);

  SubprocessResult result;
  const bool has_timeout = spec.timeout.count() > 0;
  const auto deadline = start + spec.timeout;
  Clock::time_point kill_deadline{};
  bool terminated = false;
  bool killed = false;
  bool interrupted = false;
  bool output_open = true;
  int wait_status = 0;

  for (;;) {
    // Exit check without reaping: while the child is a zombie its pid (our
    // process group id) cannot be reused, so killing the group stays safe.
    siginfo_t info{};
    const int waited = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (waited == 0 && info.si_pid == pid) {
      break;
    }
    const auto now = Clock::now();
    if (interruption_signal() != 0 && !interrupted) {
      ::kill(-pid, SIGKILL);
      kill_session(session_entry);
      interrupted = true;
    }
    if (has_timeout && !terminated && now >= deadline) {
      ::kill(-pid, SIGTERM);
      terminated = true;
      kill_deadline = now + spec.kill_grace;
    } else if (terminated && !killed && now >= kill_deadline) {
      ::kill(-pid, SIGKILL);
      killed = true;
    }
    int wait_ms = 100;
    if (has_timeout && !terminated) {
      wait_ms = milliseconds_until(deadline);
    } else if (terminated && !killed) {
      wait_ms = milliseconds_until(kill_deadline);
    }
    if (output_open) {
      pollfd fds{output_read.get(), POLLIN, 0};
      const int ready = ::poll(&fds, 1, std::max(wait_ms, 1));
      if (ready > 0) {
        output_open = drain_once(output_read.get(), sink);
      }
    } else {
      // Output closed (usually: the program is exiting); poll its exit often
      // so the measured duration stays close to the real one.
      ::usleep(static_cast<useconds_t>(std::clamp(wait_ms, 1, 5)) * 1000);
    }
  }
  const auto end = Clock::now();

  // Whatever the program left running in its group would go on writing into
  // the cache directories after we measured them.
  ::kill(-pid, SIGKILL);
  kill_session(session_entry);
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  // Output still in the pipe; a process that left our group (setsid) may hold
  // the write end forever, so the drain is bounded.
  const auto drain_deadline = Clock::now() + std::chrono::seconds(2);
  while (output_open && Clock::now() < drain_deadline) {
    pollfd fds{output_read.get(), POLLIN, 0};
    if (::poll(&fds, 1, milliseconds_until(drain_deadline)) > 0) {
      output_open = drain_once(output_read.get(), sink);
    }
  }

  sink.finish_log();
  if (interrupted) {
    return fail(interrupted_error(fmt::format("{}", quote_argv(spec.argv))));
  }
  result.duration = end - start;
  result.output_tail = sink.take_tail();
  if (terminated) {
    result.ending = SubprocessResult::Ending::timed_out;
    result.signal = killed ? SIGKILL : SIGTERM;
    if (WIFEXITED(wait_status)) {
      result.exit_status = WEXITSTATUS(wait_status);
    }
  } else if (WIFSIGNALED(wait_status)) {
    result.ending = SubprocessResult::Ending::signaled;
    result.signal = WTERMSIG(wait_status);
  } else {
    result.ending = SubprocessResult::Ending::exited;
    result.exit_status = WEXITSTATUS(wait_status);
  }
  return result;
}

} // namespace prewarm::command
