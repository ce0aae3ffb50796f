// SPDX-License-Identifier: Apache-2.0
#include "process/environment.hpp"

#include <string_view>

extern char** environ;

namespace prewarm::process {

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

std::vector<std::string>
environment_entries(const Environment& environment)
{
  std::vector<std::string> entries;
  entries.reserve(environment.size());
  for (const auto& [name, value] : environment) {
    entries.push_back(name + "=" + value);
  }
  return entries;
}

} // namespace prewarm::process
