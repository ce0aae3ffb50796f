// SPDX-License-Identifier: Apache-2.0
#include "frontend/bash_completion.hpp"

#include <fmt/format.h>

#include <memory>
#include <vector>

namespace prewarm::frontend {
namespace {

struct Words
{
  std::vector<std::string> all;         // every option spelling
  std::vector<std::string> with_value;  // spellings that take a value
};

Words
option_words(const CLI::App& app)
{
  Words words;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() && option->get_lnames().empty() && option->get_snames().empty()) {
      continue;
    }
    if (option->get_group().empty()) {
      continue; // hidden
    }
    std::vector<std::string> spellings;
    for (const auto& name : option->get_lnames()) {
      spellings.push_back("--" + name);
    }
    for (const auto& name : option->get_snames()) {
      spellings.push_back("-" + name);
    }
    for (const auto& s : spellings) {
      words.all.push_back(s);
      if (option->get_items_expected_max() > 0) { // flags expect none
        words.with_value.push_back(s);
      }
    }
  }
  return words;
}

std::vector<const CLI::App*>
visible_subcommands(const CLI::App& app)
{
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
    out.push_back(sub);
  }
  return out;
}

std::string
shell_function_name(const std::string& program)
{
  std::string name = "_";
  for (char c : program) {
    name += (c == '-') ? '_' : c;
  }
  return name;
}

} // namespace

std::string
bash_completion_script(const CLI::App& app)
{
  const std::string program = app.get_name();
  const auto subcommands = visible_subcommands(app);
  const auto top = option_words(app);

  std::vector<std::string> names;
  for (const auto* sub : subcommands) {
    names.push_back(sub->get_name());
  }
  std::string cases;
  for (const auto* sub : subcommands) {
    const auto words = option_words(*sub);
    cases += fmt::format("    {})\n      opts=\"{}\"\n      takes_value=\" {} \"\n      ;;\n", sub->get_name(),
                         fmt::join(words.all, " "), fmt::join(words.with_value, " "));
  }
  const std::string function = shell_function_name(program);
  return fmt::format(
    R"(# bash completion for {program}; generated from its command-line definitions by
# `{program} completion bash` (do not edit).
{function}() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
  local sub="" i opts takes_value
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${{COMP_WORDS[i]}} in
      {alternatives}) sub=${{COMP_WORDS[i]}}; break ;;
    esac
  done
  case $sub in
    "")
      opts="{subcommands} {top}"
      takes_value=" {top_values} "
      ;;
{cases}  esac
  if [[ $takes_value == *" $prev "* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  elif [[ $cur == -* || -z $sub ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -F {function} {program}
)",
    fmt::arg("program", program), fmt::arg("function", function),
    fmt::arg("alternatives", fmt::join(names, "|")), fmt::arg("subcommands", fmt::join(names, " ")),
    fmt::arg("top", fmt::join(top.all, " ")), fmt::arg("top_values", fmt::join(top.with_value, " ")),
    fmt::arg("cases", cases));
}

void
add_completion_command(CLI::App& app, std::function<Status()>& action)
{
  auto shell = std::make_shared<std::string>();
  // Hidden (no group): `cmake --build` runs it to make the installed script,
  // and `commands` lists the subcommands the man pages and docs/reference
  // are generated for, one per line.
  auto* cmd = app.add_subcommand("completion", "print a shell completion script");
  cmd->group("");
  cmd->add_option("shell", *shell, "the shell (bash), or `commands`")
    ->required()
    ->check(CLI::IsMember({"bash", "commands"}));
  cmd->callback([&app, &action, shell] {
    action = [&app, shell]() -> Status {
      if (*shell == "commands") {
        for (const auto* sub : visible_subcommands(app)) {
          fmt::print("{}\n", sub->get_name());
        }
      } else {
        fmt::print("{}", bash_completion_script(app));
      }
      return {};
    };
  });
}

} // namespace prewarm::frontend
