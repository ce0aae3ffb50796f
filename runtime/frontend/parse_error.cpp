// SPDX-License-Identifier: Apache-2.0
#include "frontend/parse_error.hpp"

#include "base/log.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace prewarm::frontend {
namespace {

// The deepest subcommand the user named: its --help is the useful one.
const CLI::App*
chosen_subcommand(const CLI::App& app)
{
  const CLI::App* current = &app;
  for (;;) {
    const auto chosen = current->get_subcommands();
    if (chosen.empty()) {
      return current;
    }
    current = chosen.front();
  }
}

std::string
command_path(const CLI::App& app, const CLI::App& chosen)
{
  std::string path;
  for (const CLI::App* a = &chosen; a != nullptr && a != &app; a = a->get_parent()) {
    path = path.empty() ? a->get_name() : a->get_name() + " " + path;
  }
  return path;
}

// CLI11's messages start with a capital and sometimes end with a newline.
std::string
tidy(std::string text)
{
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  for (auto& c : text) {
    if (c == '\n') {
      c = ' ';
    }
  }
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z' && !(text.size() > 1 && text[1] >= 'A' && text[1] <= 'Z')) {
    text[0] = static_cast<char>(text[0] - 'A' + 'a');
  }
  return text;
}

} // namespace

Error
usage_error(const CLI::App& app, const CLI::ParseError& error)
{
  const CLI::App& chosen = *chosen_subcommand(app);
  const std::string path = command_path(app, chosen);
  const std::string program = app.get_name();
  const std::string help = path.empty() ? fmt::format("{} --help", program)
                                        : fmt::format("{} {} --help", program, path);
  std::string what = path.empty() ? std::string("command line") : path;
  // An unknown subcommand reaches CLI11 as a stray argument ("a subcommand is
  // required"): name it, and the commands there are.
  if (path.empty() && app.remaining_size() > 0) {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
      names.push_back(sub->get_name());
    }
    return Error(Errc::usage,
                 fmt::format("'{}' is not a {} command (one of: {}; see '{}')", app.remaining().front(), program,
                             fmt::join(names, ", "), help),
                 "E_USAGE");
  }
  return Error(Errc::usage, fmt::format("{}: {} (see '{}')", what, tidy(error.what()), help), "E_USAGE");
}

int
report_parse_error(const CLI::App& app, const CLI::ParseError& error)
{
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    return app.exit(error); // --help, --version: stdout, exit 0
  }
  log::error("{}", usage_error(app, error).describe());
  return exit_code(Errc::usage);
}

} // namespace prewarm::frontend
