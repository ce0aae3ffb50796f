// SPDX-License-Identifier: Apache-2.0
#include "base/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace prewarm::log {

namespace {
std::string g_program = "prewarm";
std::atomic<Level> g_level{Level::normal};
std::mutex g_mutex; // one line at a time from parallel jobs
LineSink g_sink;    // empty: stderr
} // namespace

void
set_line_sink(LineSink sink)
{
  const std::lock_guard lock(g_mutex);
  g_sink = std::move(sink);
}

void
set_program_name(std::string_view name)
{
  g_program = std::string(name);
}

std::string_view
program_name()
{
  return g_program;
}

void
set_level(Level level)
{
  g_level = level;
}

Level
level()
{
  return g_level;
}

bool
enabled(Level at)
{
  return static_cast<int>(g_level.load()) >= static_cast<int>(at);
}

void
write(std::string_view kind, std::string_view message)
{
  const std::lock_guard lock(g_mutex);
  const auto line = kind.empty() ? fmt::format("{}: {}\n", g_program, message)
                                 : fmt::format("{}: {}: {}\n", g_program, kind, message);
  if (g_sink) {
    g_sink(line);
    return;
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

} // namespace prewarm::log
