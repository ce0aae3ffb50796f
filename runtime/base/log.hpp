// SPDX-License-Identifier: Apache-2.0
// Diagnostics on stderr, "<program>: <level>: <message>". Results go to
// stdout and never through here.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string_view>

namespace prewarm::log {

enum class Level { quiet = 0, normal = 1, verbose = 2, debug = 3 };

void set_program_name(std::string_view name); // "prewarm" or "prewarm-runtime"
std::string_view program_name();
void set_level(Level level);
Level level();
bool enabled(Level at);

void write(std::string_view kind, std::string_view message); // kind: "error", "warning", ""

// Where finished lines ("prog: kind: message\n") go instead of stderr while
// set: a live progress display (prewarm build on a terminal) prints them
// above its status lines. An empty function restores stderr.
using LineSink = std::function<void(std::string_view line)>;
void set_line_sink(LineSink sink);

template<typename... Args>
void
error(fmt::format_string<Args...> f, Args&&... args)
{
  write("error", fmt::format(f, std::forward<Args>(args)...));
}

template<typename... Args>
void
warn(fmt::format_string<Args...> f, Args&&... args)
{
  if (enabled(Level::normal)) {
    write("warning", fmt::format(f, std::forward<Args>(args)...));
  }
}

template<typename... Args>
void
info(fmt::format_string<Args...> f, Args&&... args)
{
  if (enabled(Level::normal)) {
    write("", fmt::format(f, std::forward<Args>(args)...));
  }
}

template<typename... Args>
void
verbose(fmt::format_string<Args...> f, Args&&... args)
{
  if (enabled(Level::verbose)) {
    write("", fmt::format(f, std::forward<Args>(args)...));
  }
}

template<typename... Args>
void
debug(fmt::format_string<Args...> f, Args&&... args)
{
  if (enabled(Level::debug)) {
    write("debug", fmt::format(f, std::forward<Args>(args)...));
  }
}

} // namespace prewarm::log
