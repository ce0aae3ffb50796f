// SPDX-License-Identifier: Apache-2.0
#include "manifest/command_reader.hpp"

#include "bundle/cache_kind.hpp"
#include "manifest/python_command.hpp"
#include "manifest/runtime_needs.hpp"
#include "manifest/suggest.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <utility>

namespace prewarm::manifest {

namespace {

// The kind names of a command, each a row of bundle/cache_kind.cpp.
Result<std::vector<bundle::CacheKind>>
read_kinds(const yaml::Source& source, const YAML::Node& node, const std::string& path)
{
  PW_ASSIGN(const auto names, yaml::read_unique_strings(source, node, path));
  std::vector<std::string> known;
  for (const auto kind : bundle::all_cache_kinds()) {
    known.emplace_back(bundle::to_string(kind));
  }
  std::vector<bundle::CacheKind> kinds;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto* rules = bundle::find_kind_rules(names[i]);
    if (rules == nullptr) {
      return fail(yaml::error_at(source, node[i].Mark(), yaml::index_path(path, i),
                                 fmt::format("unknown cache kind '{}' (known: {}){}", names[i], fmt::join(known, ", "),
                                             did_you_mean(names[i], known))));
    }
    kinds.push_back(rules->kind);
  }
  // Two kinds that point one variable at two places (inductor and dynamo:
  // dynamo is a whole Inductor cache with Dynamo's frames, so inductor would
  // stay empty).
  if (const auto clash = bundle::find_kind_clash(kinds)) {
    return fail(
      yaml::error_at(source, node.Mark(), path,
                     fmt::format("kinds {} and {} exclude each other (both set {}: name one of them; "
                                 "dynamo holds a whole Inductor cache plus Dynamo's frames)",
                                 bundle::to_string(clash->first), bundle::to_string(clash->second), clash->variable)));
  }
  return kinds;
}

// An interpreter option outranks the capture's environment: refused here,
// before a warm-up runs for nothing (python_command.hpp). A shell line is
// not parsed.
Status
check_interpreter_options(const yaml::Source& source, const CommandWorkload& command,
                          const std::vector<YAML::Node>& argv_items, const std::string& argv_path)
{
  const bool writes_bytecode = std::ranges::any_of(command.kinds, [](bundle::CacheKind kind) {
    return bundle::rules_of(kind).written_by == bundle::KindWriter::python_interpreter;
  });
  if (writes_bytecode && command.shell == ShellMode::direct) {
    if (const auto problem = pycache_blocker(command.argv)) {
      return fail(yaml::error_at(source, argv_items[problem->index].Mark(), yaml::index_path(argv_path, problem->index),
                                 problem->what));
    }
  }
  return {};
}

} // namespace

Result<CommandWorkload>
read_command(const yaml::Source& source, const YAML::Node& node, const std::string& path,
             const std::filesystem::path& base_directory)
{
  PW_ASSIGN(auto map,
            yaml::Map::read(source, node, path,
                            {"argv", "cwd", "env", "timeout", "shell", "kinds", "runtime_env", "caches", "verify"}));
  CommandWorkload command;
  PW_ASSIGN(auto argv_node, map.required("argv"));
  PW_ASSIGN(auto argv_items, yaml::read_list(source, argv_node, map.path_of("argv"), yaml::Emptiness::rejected));
  for (std::size_t i = 0; i < argv_items.size(); ++i) {
    const auto item_path = yaml::index_path(map.path_of("argv"), i);
    if (!argv_items[i].IsScalar()) {
      return fail(yaml::error_at(source, argv_items[i].Mark(), item_path,
                                 fmt::format("expected a string, got {}", yaml::kind_name(argv_items[i]))));
    }
    // Arguments may be empty strings (a program may want ""), the program may not.
    if (i == 0 && argv_items[i].Scalar().empty()) {
      return fail(yaml::error_at(source, argv_items[i].Mark(), item_path, "the program must not be empty"));
    }
    command.argv.push_back(argv_items[i].Scalar());
  }
  if (auto cwd = map.get("cwd")) {
    PW_ASSIGN(auto text, yaml::read_string(source, *cwd, map.path_of("cwd")));
    std::filesystem::path p(text);
    command.cwd = p.is_absolute() ? p : (base_directory / p).lexically_normal();
  }
  if (auto env = map.get("env")) {
    PW_ASSIGN(auto env_map, yaml::Map::read_any_keys(source, *env, map.path_of("env")));
    static const std::regex env_name("[A-Za-z_][A-Za-z0-9_]*");
    for (const auto& entry : env_map.entries()) {
      if (!std::regex_match(entry.key, env_name)) {
        return fail(yaml::error_at(source, entry.key_node.Mark(), env_map.path_of(entry.key),
                                   "an environment variable name is letters, digits and '_'"));
      }
      if (!entry.value.IsScalar()) {
        return fail(yaml::error_at(source, entry.value.Mark(), env_map.path_of(entry.key),
                                   fmt::format("expected a string, got {}", yaml::kind_name(entry.value))));
      }
      command.env.emplace(entry.key, entry.value.Scalar());
    }
  }
  if (auto timeout = map.get("timeout")) {
    PW_ASSIGN(command.timeout, yaml::read_duration(source, *timeout, map.path_of("timeout")));
  }
  if (auto shell = map.get("shell")) {
    PW_ASSIGN(auto use_shell, yaml::read_bool(source, *shell, map.path_of("shell")));
    command.shell = use_shell ? ShellMode::shell : ShellMode::direct;
  }
  std::optional<YAML::Mark> empty_kinds;
  if (auto kinds = map.get("kinds"); kinds && kinds->IsSequence() && kinds->size() == 0) {
    // `kinds: []`: no built-in kind, for a program whose caches are all its
    // own (checked below: then it must declare them).
    command.no_builtin_kinds = true;
    empty_kinds = kinds->Mark();
  } else if (kinds) {
    PW_ASSIGN(command.kinds, read_kinds(source, *kinds, map.path_of("kinds")));
    PW_TRY(check_interpreter_options(source, command, argv_items, map.path_of("argv")));
  }
  if (auto runtime_env = map.get("runtime_env")) {
    PW_ASSIGN(command.runtime_env, read_runtime_env(source, *runtime_env, map.path_of("runtime_env")));
  }
  if (auto caches = map.get("caches")) {
    PW_ASSIGN(command.caches, read_custom_caches(source, *caches, map.path_of("caches"), command.runtime_env));
  }
  if (auto env = map.get("env")) {
    // A flag a custom cache carries its directory in is the cache's to set.
    for (const auto& [name, value] : command.env) {
      if (const auto conflict = env_flag_conflict(command.caches, name, value); !conflict.empty()) {
        return fail(yaml::error_at(source, (*env)[name].Mark(), yaml::join_path(map.path_of("env"), name), conflict));
      }
    }
  }
  if (empty_kinds && command.caches.empty()) {
    return fail(yaml::error_at(source, *empty_kinds, map.path_of("kinds"),
                               "an empty list captures nothing: name the built-in kinds, or declare the program's "
                               "own caches under 'caches'"));
  }
  if (auto verify = map.get("verify")) {
    PW_ASSIGN(auto text, yaml::read_string(source, *verify, map.path_of("verify")));
    if (text == "off") {
      command.verify = VerifyMode::off;
    } else if (text == "warn") {
      command.verify = VerifyMode::warn;
    } else if (text == "require") {
      command.verify = VerifyMode::require;
    } else {
      return fail(yaml::error_at(source, verify->Mark(), map.path_of("verify"),
                                 fmt::format("expected require, warn or off, got '{}'", text)));
    }
  }
  return command;
}

} // namespace prewarm::manifest
