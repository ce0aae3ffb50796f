// SPDX-License-Identifier: Apache-2.0
#include "manifest/runtime_needs.hpp"

#include "bundle/app_hint.hpp"
#include "bundle/custom_cache.hpp"
#include "bundle/runtime_variable.hpp"
#include "manifest/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::manifest {

namespace {

bool
is_subdir_component(std::string_view c)
{
  return !c.empty() && c.size() <= 255 && c != "." && c != ".." &&
         std::all_of(c.begin(), c.end(), [](char ch) {
           return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                  ch == '_' || ch == '+' || ch == '-';
         });
}

// `flag: KEY={dir}` and `separator: "," | " "` of one cache entry.
Result<std::optional<bundle::CacheFlag>>
read_cache_flag(const yaml::Source& source, const yaml::Map& map)
{
  const auto flag = map.get("flag");
  const auto separator = map.get("separator");
  if (!flag && !separator) {
    return std::optional<bundle::CacheFlag>();
  }
  if (!flag) {
    return fail(yaml::error_at(source, separator->Mark(), map.path_of("separator"),
                               "separator without flag: it says what separates the flags of a variable that carries "
                               "the directory as KEY={dir}"));
  }
  if (!separator) {
    return fail(yaml::error_at(source, flag->Mark(), map.path_of("flag"),
                               "flag needs separator: what separates the variable's flags (\",\" for "
                               "PYTENSOR_FLAGS and THEANO_FLAGS, \" \" for XLA_FLAGS and NEURON_CC_FLAGS)"));
  }
  PW_ASSIGN(const auto separator_text, yaml::read_string(source, *separator, map.path_of("separator")));
  const auto separator_kind = bundle::parse_separator_char(separator_text);
  if (!separator_kind) {
    return fail(yaml::error_at(source, separator->Mark(), map.path_of("separator"),
                               fmt::format("expected \",\" or \" \", got \"{}\"", separator_text)));
  }
  PW_ASSIGN(const auto text, yaml::read_string(source, *flag, map.path_of("flag")));
  auto parsed = bundle::parse_flag_template(text, *separator_kind);
  if (!parsed) {
    return fail(yaml::error_at(source, flag->Mark(), map.path_of("flag"), parsed.error().message()));
  }
  return std::optional<bundle::CacheFlag>(std::move(*parsed));
}

} // namespace

std::string
env_flag_conflict(const std::vector<CustomCacheSpec>& caches, const std::string& variable, const std::string& value)
{
  for (const auto& cache : caches) {
    if (cache.variable != variable || !cache.flag) {
      continue;
    }
    if (const auto own = bundle::conflicting_flags(value, *cache.flag); !own.empty()) {
      return fmt::format("{} sets {}, the flag custom cache {} (at {}) carries its directory in: leave it out (the "
                         "build and prewarm-runtime set it to the cache's directory)",
                         variable, own.front(), cache.name, cache.position);
    }
  }
  return {};
}

Result<std::map<std::string, std::string>>
read_runtime_env(const yaml::Source& source, const YAML::Node& node, const std::string& path)
{
  PW_ASSIGN(auto map, yaml::Map::read_any_keys(source, node, path));
  std::map<std::string, std::string> env;
  for (const auto& entry : map.entries()) {
    if (auto allowed = bundle::check_exported_variable(entry.key); !allowed) {
      return fail(yaml::error_at(source, entry.key_node.Mark(), map.path_of(entry.key), allowed.error().message()));
    }
    if (!entry.value.IsScalar()) {
      return fail(yaml::error_at(source, entry.value.Mark(), map.path_of(entry.key),
                                 fmt::format("expected a string, got {}", yaml::kind_name(entry.value))));
    }
    const auto& value = entry.value.Scalar();
    if (!bundle::is_variable_value(value)) {
      return fail(yaml::error_at(source, entry.value.Mark(), map.path_of(entry.key),
                                 "a runtime_env value is 1..1024 printable ASCII characters without leading, "
                                 "trailing or double spaces (it is signed into the bundle manifest as one line)"));
    }
    env.emplace(entry.key, value);
  }
  return env;
}

Result<std::vector<CustomCacheSpec>>
read_custom_caches(const yaml::Source& source, const YAML::Node& node, const std::string& path,
                   const std::map<std::string, std::string>& runtime_env)
{
  PW_ASSIGN(auto items, yaml::read_list(source, node, path, yaml::Emptiness::rejected));
  std::vector<CustomCacheSpec> caches;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto item_path = yaml::index_path(path, i);
    PW_ASSIGN(auto map,
              yaml::Map::read(source, items[i], item_path, {"name", "variable", "subdir", "flag", "separator"}));
    CustomCacheSpec cache;
    cache.position = yaml::position(source, items[i].Mark());
    PW_ASSIGN(auto name_node, map.required("name"));
    PW_ASSIGN(cache.name, yaml::read_string(source, name_node, map.path_of("name")));
    if (auto named = bundle::check_custom_cache_name(cache.name); !named) {
      return fail(yaml::error_at(source, name_node.Mark(), map.path_of("name"), named.error().message()));
    }
    PW_ASSIGN(auto variable_node, map.required("variable"));
    PW_ASSIGN(cache.variable, yaml::read_string(source, variable_node, map.path_of("variable")));
    if (auto allowed = bundle::check_exported_variable(cache.variable); !allowed) {
      return fail(yaml::error_at(source, variable_node.Mark(), map.path_of("variable"), allowed.error().message()));
    }
    PW_ASSIGN(cache.flag, read_cache_flag(source, map));
    if (const auto instead = bundle::names_a_file(cache.variable); !instead.empty()) {
      // The application would fail on a directory with an error of its own
      // (tinygrad: sqlite3 "unable to open database file"), after the build ran.
      return fail(yaml::error_at(source, variable_node.Mark(), map.path_of("variable"), std::string(instead)));
    }
    if (runtime_env.contains(cache.variable)) {
      return fail(yaml::error_at(source, variable_node.Mark(), map.path_of("variable"),
                                 fmt::format("{} is also set by runtime_env; a variable either locates a custom cache "
                                             "or carries a value",
                                             cache.variable)));
    }
    if (auto subdir = map.get("subdir")) {
      PW_ASSIGN(const auto text, yaml::read_string(source, *subdir, map.path_of("subdir")));
      if (text.empty()) {
        return fail(yaml::error_at(source, subdir->Mark(), map.path_of("subdir"),
                                   "empty: subdir is optional; leave it out to keep the whole directory"));
      }
      const std::filesystem::path p(text);
      const bool inside = !text.empty() && p.is_relative() &&
                          std::all_of(p.begin(), p.end(), [](const auto& c) { return is_subdir_component(c.string()); });
      if (!inside) {
        return fail(yaml::error_at(source, subdir->Mark(), map.path_of("subdir"),
                                   fmt::format("'{}' is not a relative path inside the cache directory (components of "
                                               "[A-Za-z0-9._+-], no '..', not absolute)",
                                               text)));
      }
      cache.subdir = p;
    }
    for (const auto& earlier : caches) {
      if (earlier.name == cache.name || earlier.variable == cache.variable) {
        return fail(yaml::error_at(source, items[i].Mark(), item_path,
                                   fmt::format("custom cache {} repeats the {} of the entry at {}", cache.name,
                                               earlier.name == cache.name ? "name" : "variable", earlier.position)));
      }
    }
    caches.push_back(std::move(cache));
  }
  return caches;
}

} // namespace prewarm::manifest
