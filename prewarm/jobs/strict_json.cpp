// SPDX-License-Identifier: Apache-2.0
#include "jobs/strict_json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

namespace prewarm::jobs {

using nlohmann::json;

Result<json>
parse_json_document(std::string_view text, const JsonSource& source)
{
  auto document = json::parse(text, nullptr, false);
  if (document.is_discarded()) {
    return fail(Errc::usage, fmt::format("{} {}: not valid JSON ({})", source.kind, source.name, source.hint));
  }
  return document;
}

Result<ObjectReader>
ObjectReader::open(const json& value, std::string path, const JsonSource& source)
{
  if (!value.is_object()) {
    return fail(field_error(source, path, fmt::format("expected an object, found {}", value.type_name())));
  }
  return ObjectReader(value, std::move(path), source);
}

std::string
ObjectReader::path_of(std::string_view key) const
{
  return m_path.empty() ? std::string(key) : fmt::format("{}.{}", m_path, key);
}

Result<const json*>
ObjectReader::field(std::string_view key)
{
  const auto it = m_object.find(key);
  if (it == m_object.end()) {
    return fail(field_error(m_source, path_of(key), "missing"));
  }
  m_read.emplace(key);
  return &*it;
}

Result<std::string>
ObjectReader::string(std::string_view key)
{
  PW_ASSIGN(const auto* value, field(key));
  if (!value->is_string()) {
    return fail(field_error(m_source, path_of(key), fmt::format("expected a string, found {}", value->type_name())));
  }
  return value->get<std::string>();
}

Result<std::int64_t>
ObjectReader::integer(std::string_view key, std::int64_t min, std::int64_t max)
{
  PW_ASSIGN(const auto* value, field(key));
  return integer_value(*value, path_of(key), min, max);
}

Result<std::uint64_t>
ObjectReader::count(std::string_view key)
{
  PW_ASSIGN(const auto* value, field(key));
  if (!value->is_number_unsigned()) {
    return fail(field_error(m_source, path_of(key),
                            fmt::format("expected a whole number of 0 or more, found {}", value->type_name())));
  }
  return value->get<std::uint64_t>();
}

Result<double>
ObjectReader::number(std::string_view key)
{
  PW_ASSIGN(const auto* value, field(key));
  if (!value->is_number()) {
    return fail(field_error(m_source, path_of(key), fmt::format("expected a number, found {}", value->type_name())));
  }
  return value->get<double>();
}

Result<bool>
ObjectReader::boolean(std::string_view key)
{
  PW_ASSIGN(const auto* value, field(key));
  if (!value->is_boolean()) {
    return fail(
      field_error(m_source, path_of(key), fmt::format("expected true or false, found {}", value->type_name())));
  }
  return value->get<bool>();
}

Result<ObjectReader>
ObjectReader::object(std::string_view key)
{
  PW_ASSIGN(const auto* value, field(key));
  return open(*value, path_of(key), m_source);
}

Result<const json*>
ObjectReader::array(std::string_view key)
{
  PW_ASSIGN(const auto* value, field(key));
  if (!value->is_array()) {
    return fail(field_error(m_source, path_of(key), fmt::format("expected an array, found {}", value->type_name())));
  }
  return value;
}

Result<std::vector<std::string>>
ObjectReader::strings(std::string_view key)
{
  PW_ASSIGN(const auto* values, array(key));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < values->size(); ++i) {
    const auto& value = (*values)[i];
    if (!value.is_string()) {
      return fail(field_error(m_source, fmt::format("{}[{}]", path_of(key), i),
                              fmt::format("expected a string, found {}", value.type_name())));
    }
    out.push_back(value.get<std::string>());
  }
  return out;
}

Result<std::int64_t>
ObjectReader::integer_value(const json& value, const std::string& path, std::int64_t min, std::int64_t max) const
{
  if (!value.is_number_integer()) {
    return fail(field_error(m_source, path, fmt::format("expected an integer, found {}", value.type_name())));
  }
  const auto number = value.get<std::int64_t>();
  if (number < min || number > max) {
    return fail(field_error(m_source, path, fmt::format("{} is out of range ({} to {})", number, min, max)));
  }
  return number;
}

Status
ObjectReader::finish() const
{
  for (const auto& [key, value] : m_object.items()) {
    if (!m_read.contains(key)) {
      return fail(field_error(m_source, path_of(key), "unknown field"));
    }
  }
  return {};
}

Error
ObjectReader::field_error(const JsonSource& source, std::string_view path, std::string_view why)
{
  const auto where = path.empty() ? std::string() : fmt::format(" field '{}'", path);
  return Error(Errc::usage, fmt::format("{} {}:{}: {} ({})", source.kind, source.name, where, why, source.hint));
}

std::string
ObjectReader::unknown_choice(std::string_view text, const std::vector<std::string_view>& names)
{
  return fmt::format("unknown value '{}' (one of: {})", text, fmt::join(names, ", "));
}

} // namespace prewarm::jobs
