// SPDX-License-Identifier: Apache-2.0
#include "command/subprocess.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "jobs/interruption.hpp"
#include "process/run.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>


namespace prewarm::command {

namespace {

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

} // namespace

Result<SubprocessResult>
run_subprocess(const SubprocessSpec& spec)
{
  if (spec.argv.empty()) {
    return fail(Errc::usage, "cannot run a command with an empty argv");
  }
  process::Spec child;
  if (spec.shell == ShellMode::via_shell) {
    child.argv = {"/bin/sh", "-c"};
  }
  child.argv.insert(child.argv.end(), spec.argv.begin(), spec.argv.end());
  child.working_directory = spec.working_directory;
  // Marks every process of this run, whatever session or group it moves to.
  static std::atomic<unsigned> runs{0};
  const std::string session_value = fmt::format("{}-{}-{}", ::getpid(), runs.fetch_add(1),
                                                std::chrono::steady_clock::now().time_since_epoch().count());
  const std::string session_entry = fmt::format("{}={}", k_session_variable, session_value);
  child.environment = spec.environment;
  child.environment->insert_or_assign(std::string(k_session_variable), session_value);
  child.group = process::ProcessGroup::kill_group;

  UniqueFd log_fd;
  if (!spec.log_file.empty()) {
    log_fd.reset(::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (!log_fd) {
      return fail(Errc::failed, fmt::format("cannot open log file {}: {}", in_quotes(spec.log_file.string()),
                                            errno_message(errno)));
    }
  }
  OutputSink sink(log_fd.get(), spec.log_file.string(), spec.tail_bytes, spec.log_cap_bytes);

  process::Supervision supervision;
  supervision.timeout = spec.timeout;
  supervision.term_grace = spec.kill_grace;
  supervision.on_output = [&](const char* data, std::size_t size) { sink.append(data, size); };
  supervision.stop_requested = [] { return jobs::interruption_signal() != 0; };
  // What left the group (a `setsid` daemon) still carries the session token.
  supervision.after_exit = [&] { kill_session(session_entry); };
  auto outcome = process::run(child, supervision);
  if (!outcome) {
    return fail(Errc::failed, outcome.error().describe(child));
  }
  sink.finish_log();
  if (outcome->ending == process::Outcome::Ending::stopped) {
    return fail(jobs::interrupted_error(fmt::format("{}", quote_argv(spec.argv))));
  }
  SubprocessResult result;
  static_cast<process::Outcome&>(result) = std::move(*outcome);
  result.output_tail = sink.take_tail();
  return result;
}

} // namespace prewarm::command
