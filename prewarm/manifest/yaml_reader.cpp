// SPDX-License-Identifier: Apache-2.0
#include "manifest/yaml_reader.hpp"

#include "base/time_format.hpp"
#include "manifest/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>

namespace prewarm::manifest::yaml {
namespace {

// yaml-cpp marks are 0-based; -1 marks "no position" (e.g. a missing node).
std::string
line_column(const YAML::Mark& mark)
{
  if (mark.is_null() || mark.line < 0) {
    return "?:?";
  }
  return fmt::format("{}:{}", mark.line + 1, mark.column + 1);
}

bool
is_plain_scalar(const YAML::Node& node)
{
  // Quoted scalars carry the non-specific tag "!"; plain ones "?".
  return node.IsScalar() && node.Tag() == "?";
}

} // namespace

std::string
position(const Source& source, const YAML::Mark& mark)
{
  return fmt::format("{}:{}", source.name, line_column(mark));
}

Error
error_at(const Source& source, const YAML::Mark& mark, std::string_view path, std::string_view what)
{
  if (path.empty()) {
    return Error(Errc::usage, fmt::format("{}: {}", position(source, mark), what), std::string(k_error_code));
  }
  return Error(Errc::usage, fmt::format("{}: {}: {}", position(source, mark), path, what), std::string(k_error_code));
}

Result<YAML::Node>
load(const Source& source, std::string_view text)
{
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsDefined() || root.IsNull()) {
      return fail(error_at(source, YAML::Mark(), "", "the document is empty"));
    }
    return root;
  } catch (const YAML::ParserException& e) {
    return fail(error_at(source, e.mark, "", fmt::format("YAML syntax error: {}", e.msg)));
  } catch (const YAML::Exception& e) {
    return fail(error_at(source, e.mark, "", fmt::format("YAML error: {}", e.msg)));
  }
}

std::string_view
kind_name(const YAML::Node& node)
{
  switch (node.Type()) {
  case YAML::NodeType::Map:
    return "a map";
  case YAML::NodeType::Sequence:
    return "a list";
  case YAML::NodeType::Scalar:
    return "a scalar";
  case YAML::NodeType::Null:
    return "nothing (null)";
  case YAML::NodeType::Undefined:
    break;
  }
  return "nothing";
}

std::string
join_path(std::string_view parent, std::string_view key)
{
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

std::string
index_path(std::string_view parent, std::size_t index)
{
  return fmt::format("{}[{}]", parent, index);
}

Result<Map>
Map::read(const Source& source, const YAML::Node& node, std::string path, std::initializer_list<std::string_view> allowed)
{
  PW_ASSIGN(Map map, read_any_keys(source, node, std::move(path)));
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (const auto& entry : map.m_entries) {
    if (std::find(names.begin(), names.end(), entry.key) == names.end()) {
      return fail(error_at(source, entry.key_node.Mark(), map.path_of(entry.key),
                           fmt::format("unknown key '{}'{}", entry.key, did_you_mean(entry.key, names))));
    }
  }
  return map;
}

Result<Map>
Map::read_any_keys(const Source& source, const YAML::Node& node, std::string path)
{
  if (!node.IsMap()) {
    return fail(error_at(source, node.Mark(), path, fmt::format("expected a map, got {}", kind_name(node))));
  }
  Map map;
  map.m_source = &source;
  map.m_mark = node.Mark();
  std::map<std::string, YAML::Mark, std::less<>> first_seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      return fail(error_at(source, key.Mark(), path, fmt::format("keys must be names, got {}", kind_name(key))));
    }
    std::string name = key.Scalar();
    if (const auto seen = first_seen.find(name); seen != first_seen.end()) {
      return fail(error_at(source, key.Mark(), join_path(path, name),
                           fmt::format("duplicate key '{}' (first at line {})", name, seen->second.line + 1)));
    }
    first_seen.emplace(name, key.Mark());
    map.m_entries.push_back(Entry{std::move(name), key, it->second});
  }
  map.m_path = std::move(path);
  return map;
}

std::optional<YAML::Node>
Map::get(std::string_view key) const
{
  for (const auto& entry : m_entries) {
    if (entry.key == key) {
      return entry.value;
    }
  }
  return std::nullopt;
}

Result<YAML::Node>
Map::required(std::string_view key) const
{
  if (auto value = get(key)) {
    return *value;
  }
  return fail(error_at(*m_source, m_mark, m_path.empty() ? std::string("(top level)") : m_path,
                       fmt::format("missing required key '{}'", key)));
}

Result<std::string>
read_string(const Source& source, const YAML::Node& node, std::string_view path)
{
  if (!node.IsScalar()) {
    return fail(error_at(source, node.Mark(), path, fmt::format("expected a string, got {}", kind_name(node))));
  }
  if (node.Scalar().empty()) {
    return fail(error_at(source, node.Mark(), path, "must not be empty"));
  }
  return node.Scalar();
}

Result<std::int64_t>
read_integer(const Source& source, const YAML::Node& node, std::string_view path, std::int64_t min, std::int64_t max)
{
  if (!node.IsScalar()) {
    return fail(error_at(source, node.Mark(), path, fmt::format("expected an integer, got {}", kind_name(node))));
  }
  const std::string& text = node.Scalar();
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!is_plain_scalar(node) || ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return fail(error_at(source, node.Mark(), path, fmt::format("expected an integer, got '{}'", text)));
  }
  if (value < min || value > max) {
    return fail(error_at(source, node.Mark(), path, fmt::format("{} is out of range [{}, {}]", value, min, max)));
  }
  return value;
}

Result<double>
read_number(const Source& source, const YAML::Node& node, std::string_view path)
{
  if (!node.IsScalar()) {
    return fail(error_at(source, node.Mark(), path, fmt::format("expected a number, got {}", kind_name(node))));
  }
  const std::string& text = node.Scalar();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (!is_plain_scalar(node) || text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    return fail(error_at(source, node.Mark(), path, fmt::format("expected a number, got '{}'", text)));
  }
  return value;
}

Result<bool>
read_bool(const Source& source, const YAML::Node& node, std::string_view path)
{
  if (is_plain_scalar(node) && node.Scalar() == "true") {
    return true;
  }
  if (is_plain_scalar(node) && node.Scalar() == "false") {
    return false;
  }
  const std::string got = node.IsScalar() ? fmt::format("'{}'", node.Scalar()) : std::string(kind_name(node));
  return fail(error_at(source, node.Mark(), path, fmt::format("expected true or false, got {}", got)));
}

Result<std::vector<YAML::Node>>
read_list(const Source& source, const YAML::Node& node, std::string_view path, Emptiness emptiness)
{
  if (!node.IsSequence()) {
    return fail(error_at(source, node.Mark(), path, fmt::format("expected a list, got {}", kind_name(node))));
  }
  std::vector<YAML::Node> items;
  for (const auto& item : node) {
    items.push_back(item);
  }
  if (items.empty() && emptiness == Emptiness::rejected) {
    return fail(error_at(source, node.Mark(), path, "the list must not be empty"));
  }
  return items;
}

Result<std::vector<std::string>>
read_unique_strings(const Source& source, const YAML::Node& node, std::string_view path)
{
  PW_ASSIGN(auto items, read_list(source, node, path, Emptiness::rejected));
  std::vector<std::string> values;
  std::map<std::string, YAML::Mark, std::less<>> seen;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item_path = index_path(path, i);
    PW_ASSIGN(auto value, read_string(source, items[i], item_path));
    if (const auto first = seen.find(value); first != seen.end()) {
      return fail(error_at(source, items[i].Mark(), item_path,
                           fmt::format("duplicate '{}' (first at {})", value, line_column(first->second))));
    }
    seen.emplace(value, items[i].Mark());
    values.push_back(std::move(value));
  }
  return values;
}

Result<std::vector<std::int64_t>>
read_unique_integers(const Source& source,
                     const YAML::Node& node,
                     std::string_view path,
                     std::int64_t min,
                     std::int64_t max)
{
  PW_ASSIGN(auto items, read_list(source, node, path, Emptiness::rejected));
  std::vector<std::int64_t> values;
  std::map<std::int64_t, YAML::Mark> seen;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item_path = index_path(path, i);
    PW_ASSIGN(auto value, read_integer(source, items[i], item_path, min, max));
    if (const auto first = seen.find(value); first != seen.end()) {
      return fail(error_at(source, items[i].Mark(), item_path,
                           fmt::format("duplicate {} (first at {})", value, line_column(first->second))));
    }
    seen.emplace(value, items[i].Mark());
    values.push_back(value);
  }
  return values;
}

Result<std::chrono::seconds>
read_duration(const Source& source, const YAML::Node& node, const std::string& path)
{
  PW_ASSIGN(auto text, read_string(source, node, path));
  auto parsed = parse_duration(text);
  if (!parsed || parsed->count() <= 0) {
    return fail(error_at(source, node.Mark(), path,
                         fmt::format("expected a duration such as 90d, 12h, 30m or 45s, got '{}'", text)));
  }
  return *parsed;
}

} // namespace prewarm::manifest::yaml
