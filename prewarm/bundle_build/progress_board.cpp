// SPDX-License-Identifier: Apache-2.0
#include "bundle_build/progress_board.hpp"

#include "base/log.hpp"

#include <fmt/format.h>

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace prewarm::bundle_build {

namespace {

std::string_view
environment(const char* name)
{
  const char* value = std::getenv(name);
  return value == nullptr ? std::string_view() : std::string_view(value);
}

double
seconds_since(std::chrono::steady_clock::time_point since)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// The last complete, non-empty line of the file, without reading more than
// its tail. A line still being written (no newline yet) is not shown: it may
// be a fragment. Indented lines continue the line above (Python prints a
// warning as "file:12: UserWarning: text" then "  warnings.warn("; a
// traceback indents its frames): the line they continue is shown instead.
std::string
last_line(const std::filesystem::path& file)
{
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return {};
  }
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(in.tellg());
  const std::streamoff tail = std::min<std::streamoff>(size, 4096);
  in.seekg(size - tail);
  std::string text(static_cast<std::size_t>(tail), '\0');
  in.read(text.data(), tail);
  for (auto& c : text) {
    if (c == '\r' || c == '\t') {
      c = (c == '\t') ? ' ' : '\n'; // a progress bar's carriage returns end its lines
    }
  }
  if (tail < size) {
    // The tail starts inside a line: not a line.
    const auto first = text.find('\n');
    text.erase(0, first == std::string::npos ? text.size() : first + 1);
  }
  // Only what ends in a newline is complete.
  if (const auto end = text.rfind('\n'); end != std::string::npos) {
    text.resize(end + 1);
  } else {
    text.clear(); // one line, still being written
  }
  std::vector<std::string> lines;
  for (std::size_t begin = 0; begin < text.size();) {
    auto stop = text.find('\n', begin);
    std::string one = text.substr(begin, stop - begin);
    while (!one.empty() && one.back() == ' ') {
      one.pop_back();
    }
    if (!one.empty()) {
      lines.push_back(std::move(one));
    }
    begin = stop + 1;
  }
  std::string line;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->front() != ' ') {
      line = *it;
      break;
    }
  }
  if (line.empty() && !lines.empty()) {
    line = lines.back();
  }
  std::string printable;
  for (char c : line) {
    printable += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  }
  return printable;
}

std::size_t
terminal_width()
{
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) {
    return size.ws_col;
  }
  return 80;
}

std::string
clip(std::string text, std::size_t width)
{
  if (text.size() > width) {
    text.resize(width > 3 ? width - 3 : width);
    text += "...";
  }
  return text;
}

} // namespace

std::string_view
to_string(ProgressMode mode)
{
  switch (mode) {
  case ProgressMode::live:
    return "live";
  case ProgressMode::heartbeat:
    return "heartbeat";
  case ProgressMode::off:
    return "off";
  }
  return "?";
}

Result<ProgressOptions>
progress_options_from_environment()
{
  ProgressOptions options;
  const auto forced = environment("PREWARM_PROGRESS");
  if (!log::enabled(log::Level::normal)) {
    options.mode = ProgressMode::off;
    options.mode_origin = "-q";
  } else if (!forced.empty()) {
    if (forced == "live") {
      options.mode = ProgressMode::live;
    } else if (forced == "heartbeat") {
      options.mode = ProgressMode::heartbeat;
    } else if (forced == "off") {
      options.mode = ProgressMode::off;
    } else {
      return fail(Errc::usage,
                  fmt::format("PREWARM_PROGRESS={}: not a progress mode (live, heartbeat or off)", forced),
                  "E_CONFIG");
    }
    options.mode_origin = "environment PREWARM_PROGRESS";
  } else {
    const bool terminal = ::isatty(STDERR_FILENO) == 1 && environment("TERM") != "dumb";
    options.mode = terminal ? ProgressMode::live : ProgressMode::heartbeat;
    options.mode_origin = terminal ? "default (stderr is a terminal)" : "default (stderr is not a terminal)";
  }
  if (const auto text = environment("PREWARM_PROGRESS_INTERVAL"); !text.empty()) {
    double seconds = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || end != text.data() + text.size() || !(seconds >= 0.05) || seconds > 86400) {
      return fail(Errc::usage,
                  fmt::format("PREWARM_PROGRESS_INTERVAL={}: not a number of seconds from 0.05 to 86400", text),
                  "E_CONFIG");
    }
    options.interval = std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    options.interval_origin = "environment PREWARM_PROGRESS_INTERVAL";
  }
  return options;
}

ProgressBoard::ProgressBoard(ProgressOptions options) : m_options(std::move(options))
{
  if (m_options.mode == ProgressMode::off) {
    return;
  }
  if (m_options.mode == ProgressMode::live) {
    log::set_line_sink([this](std::string_view line) { print_line(line); });
  }
  m_thread = std::thread([this] { loop(); });
}

ProgressBoard::~ProgressBoard()
{
  if (!m_thread.joinable()) {
    return;
  }
  {
    const std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  m_thread.join();
  if (m_options.mode == ProgressMode::live) {
    log::set_line_sink({});
    const std::lock_guard lock(m_mutex);
    erase_locked();
  }
}

void
ProgressBoard::job_started(std::size_t key, std::string job_id, std::string plan, std::filesystem::path log_file)
{
  if (m_options.mode == ProgressMode::off) {
    return;
  }
  const std::lock_guard lock(m_mutex);
  m_running[key] = Running{std::move(job_id), std::move(plan), std::move(log_file), std::chrono::steady_clock::now()};
  if (m_options.mode == ProgressMode::live) {
    erase_locked();
    draw_locked();
  }
}

void
ProgressBoard::job_finished(std::size_t key)
{
  if (m_options.mode == ProgressMode::off) {
    return;
  }
  const std::lock_guard lock(m_mutex);
  m_running.erase(key);
  if (m_options.mode == ProgressMode::live) {
    erase_locked();
    draw_locked();
  }
}

std::string
ProgressBoard::doing(const Running& job) const
{
  auto line = last_line(job.log_file);
  return line.empty() ? job.plan : line;
}

void
ProgressBoard::loop()
{
  // Live lines tick every second; heartbeats every interval.
  const auto period = m_options.mode == ProgressMode::live
                        ? std::min<std::chrono::milliseconds>(m_options.interval, std::chrono::seconds(1))
                        : m_options.interval;
  std::unique_lock lock(m_mutex);
  while (!m_wake.wait_for(lock, period, [this] { return m_stop; })) {
    if (m_options.mode == ProgressMode::live) {
      erase_locked();
      draw_locked();
    } else {
      heartbeat_locked();
    }
  }
}

void
ProgressBoard::heartbeat_locked()
{
  if (m_running.empty()) {
    return;
  }
  std::string jobs;
  for (const auto& [key, job] : m_running) {
    jobs += fmt::format("{}{} ({:.0f} s: {})", jobs.empty() ? "" : ", ", job.job_id, seconds_since(job.since),
                        clip(doing(job), 100));
  }
  std::fputs(fmt::format("{}: still running {} job{}: {}\n", log::program_name(), m_running.size(),
                         m_running.size() == 1 ? "" : "s", jobs)
               .c_str(),
             stderr);
  std::fflush(stderr);
}

void
ProgressBoard::erase_locked()
{
  if (m_drawn > 0) {
    std::fputs(fmt::format("\x1b[{}A\r\x1b[J", m_drawn).c_str(), stderr);
    m_drawn = 0;
  }
}

void
ProgressBoard::draw_locked()
{
  const auto width = terminal_width() - 1; // a full-width line would wrap on some terminals
  std::string text;
  for (const auto& [key, job] : m_running) {
    text += clip(fmt::format("  {:6.1f} s  {}: {}", seconds_since(job.since), job.job_id, doing(job)), width) + "\n";
    ++m_drawn;
  }
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

void
ProgressBoard::print_line(std::string_view line)
{
  const std::lock_guard lock(m_mutex);
  erase_locked();
  std::fwrite(line.data(), 1, line.size(), stderr);
  draw_locked();
}

} // namespace prewarm::bundle_build
