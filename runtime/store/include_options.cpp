// SPDX-License-Identifier: Apache-2.0
// The options' side of a program's includes (program_includes.hpp): the
// directories, forced includes and macros an options string names, read as
// both splittings drivers use, and the search's fixed places.
#include "store/program_includes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>

namespace prewarm::store {
namespace {

bool
blank(char c)
{
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

void
add_unique(std::vector<std::string>& list, std::string value)
{
  if (std::find(list.begin(), list.end(), value) == list.end()) {
    list.push_back(std::move(value));
  }
}

// Blank-separated words, quotes kept (a driver that splits at blanks only).
std::vector<std::string>
split_at_blanks(std::string_view options)
{
  std::vector<std::string> words;
  std::string word;
  for (const char c : options) {
    if (blank(c) || c == '\n') {
      if (!word.empty()) {
        words.push_back(std::move(word));
        word.clear();
      }
    } else {
      word += c;
    }
  }
  if (!word.empty()) {
    words.push_back(std::move(word));
  }
  return words;
}

// Words as a shell splits them: quotes group and vanish, a backslash
// escapes (outside single quotes). Empty `unsure` unless a quote is open.
std::vector<std::string>
split_as_shell(std::string_view options, std::string& unsure)
{
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const char c = options[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < options.size()) {
        word += options[++i];
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < options.size()) {
      word += options[++i];
      in_word = true;
    } else if (blank(c) || c == '\n') {
      if (in_word) {
        words.push_back(std::move(word));
        word.clear();
        in_word = false;
      }
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    unsure = "the build options leave a quote open";
  }
  if (in_word) {
    words.push_back(std::move(word));
  }
  return words;
}


// Reads one splitting's words into `out`.
void
read_option_words(const std::vector<std::string>& words, IncludeOptions& out)
{
  static constexpr std::string_view k_dir_options[] = {"-iquote", "-isystem", "-idirafter", "-I"};
  static constexpr std::string_view k_file_options[] = {"-include", "-imacros"};
  for (std::size_t i = 0; i < words.size() && out.unsure.empty(); ++i) {
    const std::string_view w = words[i];
    // The value of an option spelled apart or joined; empty when absent.
    const auto value = [&](std::string_view option) -> std::string {
      if (w.size() > option.size()) {
        return std::string(w.substr(option.size()));
      }
      return i + 1 < words.size() ? words[++i] : std::string{};
    };
    bool known = false;
    for (const auto option : k_file_options) {
      if (!known && w.starts_with(option)) {
        known = true;
        if (auto file = value(option); !file.empty()) {
          add_unique(out.forced, std::move(file));
        }
      }
    }
    for (const auto option : k_dir_options) {
      if (!known && w.starts_with(option)) {
        known = true;
        auto dir = value(option);
        if (dir == "-") {
          out.unsure = "the build options use `-I-` (an obsolete split of the search path)";
        } else if (!dir.empty()) {
          add_unique(out.dirs, std::move(dir));
        }
      }
    }
    if (known) {
      continue;
    }
    // Anything else that can move the search or read options from a file.
    if (w.starts_with("@")) {
      out.unsure = fmt::format("the build options read a response file ({})", w);
    } else if (w.starts_with("-i") || w.starts_with("--include") || w.starts_with("--sysroot") || w.starts_with("-X") ||
               w.starts_with("-fmodule") || w.starts_with("-F") || w.starts_with("--system-header") ||
               w.starts_with("-cxx-isystem")) {
      out.unsure = fmt::format("the build options hold {}, which changes where headers are found", w);
    }
  }
}

} // namespace

IncludeOptions
parse_include_options(std::string_view options)
{
  IncludeOptions out;
  std::string quote_problem;
  const auto shell_words = split_as_shell(options, quote_problem);
  const auto blank_words = split_at_blanks(options);
  read_option_words(shell_words, out);
  if (out.unsure.empty()) {
    read_option_words(blank_words, out);
  }
  out.macros = option_macros(shell_words);
  auto more = option_macros(blank_words);
  out.macros.insert(out.macros.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  if (out.unsure.empty() && !quote_problem.empty()) {
    out.unsure = quote_problem;
  }
  return out;
}

IncludeSearch
default_include_search()
{
  IncludeSearch search;
  for (const char* variable : {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH"}) {
    const char* value = std::getenv(variable);
    if (value == nullptr || *value == '\0') {
      continue;
    }
    std::string_view rest = value;
    for (;;) {
      const auto colon = rest.find(':');
      const auto dir = rest.substr(0, colon);
      add_unique(search.dirs, dir.empty() ? std::string(".") : std::string(dir));
      if (colon == std::string_view::npos) {
        break;
      }
      rest.remove_prefix(colon + 1);
    }
  }
  // The compilers' own directories this host has (clang's resource
  // headers, PoCL's), so that a name found only there is keyed by content.
  std::error_code ec;
  for (const auto& llvm : std::filesystem::directory_iterator("/usr/lib", ec)) {
    if (!llvm.path().filename().string().starts_with("llvm-")) {
      continue;
    }
    std::error_code inner;
    for (const auto& version : std::filesystem::directory_iterator(llvm.path() / "lib" / "clang", inner)) {
      add_unique(search.dirs, (version.path() / "include").string());
    }
  }
  add_unique(search.dirs, "/usr/share/pocl/include");
  for (const char* dir : {"/usr/local/include",
#if defined(__x86_64__)
                          "/usr/include/x86_64-linux-gnu",
#elif defined(__aarch64__)
                          "/usr/include/aarch64-linux-gnu",
#endif
                          "/usr/include"}) {
    add_unique(search.dirs, dir);
  }
  return search;
}

} // namespace prewarm::store
