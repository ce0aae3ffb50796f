// SPDX-License-Identifier: Apache-2.0
#include "cli/build_settings.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::cli {

std::string
format_settings(const std::vector<Setting>& settings)
{
  std::size_t width = 0;
  for (const auto& s : settings) {
    width = std::max(width, s.origin.size() + 2);
  }
  std::string out;
  for (const auto& s : settings) {
    out += fmt::format("{:<{}} {} = {}\n", "(" + s.origin + ")", width, s.name, s.value);
  }
  return out;
}

} // namespace prewarm::cli
