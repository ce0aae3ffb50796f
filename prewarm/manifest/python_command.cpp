// SPDX-License-Identifier: Apache-2.0
#include "manifest/python_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string_view>

namespace prewarm::manifest {

bool
looks_like_python(const std::vector<std::string>& argv)
{
  if (argv.empty()) {
    return false;
  }
  const auto name = std::filesystem::path(argv.front()).filename().string();
  if (!name.starts_with("python")) {
    return false;
  }
  const auto rest = std::string_view(name).substr(6);
  return std::all_of(rest.begin(), rest.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.'; });
}

std::optional<ArgvProblem>
pycache_blocker(const std::vector<std::string>& argv)
{
  if (!looks_like_python(argv)) {
    return std::nullopt;
  }
  constexpr std::string_view ignores_prefix =
    "ignores PYTHONPYCACHEPREFIX: the pycache kind would capture nothing, and the application would not read "
    "the installed bytecode";
  // CPython's short options (Modules/main.c, Python/getopt.c): c, m, W and X
  // take a value; -c and -m end the interpreter's options, as does the
  // script, "-" or "--". Long options are --help/--version (no value) and
  // --check-hash-based-pycs MODE.
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--" || arg == "-" || !arg.starts_with("-")) {
      return std::nullopt;
    }
    if (arg.starts_with("--")) {
      i += arg == "--check-hash-based-pycs" ? 1 : 0;
      continue;
    }
    for (std::size_t j = 1; j < arg.size(); ++j) {
      const char option = arg[j];
      if (option == 'c' || option == 'm') {
        return std::nullopt;
      }
      if (option == 'B') {
        return ArgvProblem{i, "python's -B writes no bytecode: the pycache kind would capture nothing (remove -B "
                              "or the kind)"};
      }
      if (option == 'E' || option == 'I') {
        return ArgvProblem{i, fmt::format("python's -{}{} {} (remove -{} or the kind)", option,
                                          option == 'I' ? " (isolated mode, which implies -E)" : "", ignores_prefix,
                                          option)};
      }
      if (option == 'W' || option == 'X') {
        const bool attached = j + 1 < arg.size();
        const std::size_t at = attached ? i : i + 1;
        const std::string_view value =
          attached ? arg.substr(j + 1) : (at < argv.size() ? std::string_view(argv[at]) : std::string_view());
        if (option == 'X' && (value == "pycache_prefix" || value.starts_with("pycache_prefix="))) {
          return ArgvProblem{at, "python's -X pycache_prefix outranks PYTHONPYCACHEPREFIX: the pycache kind would "
                                 "capture nothing, and the application would not read the installed bytecode "
                                 "(remove the option or the kind)"};
        }
        i = at;
        break;
      }
    }
  }
  return std::nullopt;
}

} // namespace prewarm::manifest
