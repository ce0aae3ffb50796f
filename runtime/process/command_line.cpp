// SPDX-License-Identifier: Apache-2.0
#include "process/command_line.hpp"

#include "base/encoding.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace prewarm::process {

namespace {

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
    line += shell_single_quoted(word);
  }
  return line;
}

} // namespace prewarm::process
