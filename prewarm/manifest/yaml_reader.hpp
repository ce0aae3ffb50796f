// SPDX-License-Identifier: Apache-2.0
// Strict reading of YAML documents (manifests, the target registry, presets)
// on top of yaml-cpp. Internal to prewarm_manifest: yaml-cpp types and
// exceptions stop here.
//
// Strictness, because yaml-cpp is lenient where a build manifest must not be:
// - duplicate keys are errors (yaml-cpp 0.7 keeps both pairs and `node[key]`
//   silently returns the first, so we walk the pairs ourselves);
// - unknown keys are errors at every level, with the nearest known key;
// - types are exact: an integer is a plain (unquoted) decimal scalar, a
//   boolean is plain `true`/`false`, a list is a sequence, empty lists are
//   errors where a list is required.
// Every error is "FILE:LINE:COLUMN: FIELD.PATH: what" (1-based positions).
#pragma once

#include "base/error.hpp"

#include <chrono>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::manifest::yaml {

inline constexpr std::string_view k_error_code = "E_MANIFEST";

// Where a document came from, for messages ("manifests/ci.yaml", "<embedded targets.yaml>").
struct Source
{
  std::string name;
};

std::string position(const Source& source, const YAML::Mark& mark); // "FILE:LINE:COL"

// Errc::usage with code E_MANIFEST: "FILE:LINE:COL: PATH: what".
Error error_at(const Source& source, const YAML::Mark& mark, std::string_view path, std::string_view what);

// Parses one document; syntax errors carry the position yaml-cpp reports.
Result<YAML::Node> load(const Source& source, std::string_view text);

// "a map", "a list", "a scalar", "nothing (null)".
std::string_view kind_name(const YAML::Node& node);

std::string join_path(std::string_view parent, std::string_view key);  // "bundle" + "channel" -> "bundle.channel"
std::string index_path(std::string_view parent, std::size_t index);    // "models" + 1 -> "models[1]"

// A mapping whose keys were checked: scalars, unique, all in `allowed`.
class Map
{
public:
  static Result<Map> read(const Source& source,
                          const YAML::Node& node,
                          std::string path,
                          std::initializer_list<std::string_view> allowed);
  // As above with a runtime list of allowed keys; an empty list allows any key
  // (for maps keyed by user-chosen names, e.g. env or the registry's targets).
  static Result<Map> read_any_keys(const Source& source, const YAML::Node& node, std::string path);

  struct Entry
  {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };

  const std::vector<Entry>& entries() const { return m_entries; }
  std::optional<YAML::Node> get(std::string_view key) const;
  Result<YAML::Node> required(std::string_view key) const; // "missing required key 'x'"
  std::string path_of(std::string_view key) const { return join_path(m_path, key); }
  const std::string& path() const { return m_path; }
  YAML::Mark mark() const { return m_mark; }
  const Source& source() const { return *m_source; }

private:
  const Source* m_source = nullptr;
  std::string m_path;
  YAML::Mark m_mark;
  std::vector<Entry> m_entries;
};

// A positive duration: "90d", "12h", "30m", "45s" (base/time_format.hpp).
Result<std::chrono::seconds> read_duration(const Source& source, const YAML::Node& node, const std::string& path);

Result<std::string> read_string(const Source& source, const YAML::Node& node, std::string_view path);
Result<std::int64_t> read_integer(const Source& source,
                                  const YAML::Node& node,
                                  std::string_view path,
                                  std::int64_t min,
                                  std::int64_t max);
Result<double> read_number(const Source& source, const YAML::Node& node, std::string_view path);
Result<bool> read_bool(const Source& source, const YAML::Node& node, std::string_view path);

enum class Emptiness { allowed, rejected };
Result<std::vector<YAML::Node>> read_list(const Source& source,
                                          const YAML::Node& node,
                                          std::string_view path,
                                          Emptiness emptiness);

// A non-empty list of distinct strings ("duplicate 'x' (first at LINE:COL)").
Result<std::vector<std::string>> read_unique_strings(const Source& source,
                                                     const YAML::Node& node,
                                                     std::string_view path);
// A non-empty list of distinct integers in [min, max].
Result<std::vector<std::int64_t>> read_unique_integers(const Source& source,
                                                       const YAML::Node& node,
                                                       std::string_view path,
                                                       std::int64_t min,
                                                       std::int64_t max);

} // namespace prewarm::manifest::yaml
