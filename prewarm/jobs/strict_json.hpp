// SPDX-License-Identifier: Apache-2.0
// The one strict reader for the JSON documents the builder hands between its
// own processes (the job request a built-in job's child reads, the job report
// the parent reads back): each field read is marked, and finish() refuses
// any field left unread, so a document from another build of prewarm is
// refused by name instead of read with defaults. Errors name the document
// and the field's path:
//   job request FILE: field 'model.layers[2].kernel': missing (HINT)
#pragma once

#include "base/error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prewarm::jobs {

// What a document is, for messages: kind "job request", name its file, and the
// hint every error ends with (who writes it; what to do instead of editing).
struct JsonSource
{
  std::string kind;
  std::string name;
  std::string hint;
};

// Parses `text` as one JSON document; not JSON is Errc::usage naming `source`.
Result<nlohmann::json> parse_json_document(std::string_view text, const JsonSource& source);

class ObjectReader
{
public:
  // `source` must outlive the reader and every reader opened from it.
  static Result<ObjectReader> open(const nlohmann::json& value, std::string path, const JsonSource& source);

  std::string path_of(std::string_view key) const;
  bool has(std::string_view key) const { return m_object.contains(key); }

  Result<const nlohmann::json*> field(std::string_view key);
  Result<std::string> string(std::string_view key);
  Result<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max);
  Result<std::uint64_t> count(std::string_view key); // an integer >= 0
  Result<double> number(std::string_view key);
  Result<bool> boolean(std::string_view key);
  Result<ObjectReader> object(std::string_view key);
  Result<const nlohmann::json*> array(std::string_view key);
  Result<std::vector<std::string>> strings(std::string_view key); // an array of strings

  template<typename Enum>
  Result<Enum> choice(std::string_view key, std::initializer_list<std::pair<std::string_view, Enum>> options)
  {
    PW_ASSIGN(const auto text, string(key));
    std::vector<std::string_view> names;
    for (const auto& [name, value] : options) {
      if (name == text) {
        return value;
      }
      names.push_back(name);
    }
    return fail(field_error(m_source, path_of(key), unknown_choice(text, names)));
  }

  Result<std::int64_t> integer_value(const nlohmann::json& value, const std::string& path, std::int64_t min,
                                     std::int64_t max) const;

  // Every field of the object was read; an unread one is an "unknown field".
  Status finish() const;

  const JsonSource& source() const { return m_source; }

  static Error field_error(const JsonSource& source, std::string_view path, std::string_view why);

private:
  ObjectReader(const nlohmann::json& object, std::string path, const JsonSource& source)
    : m_object(object), m_path(std::move(path)), m_source(source)
  {
  }
  static std::string unknown_choice(std::string_view text, const std::vector<std::string_view>& names);

  const nlohmann::json& m_object;
  std::string m_path;
  const JsonSource& m_source;
  std::set<std::string, std::less<>> m_read;
};

} // namespace prewarm::jobs
