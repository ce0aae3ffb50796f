// SPDX-License-Identifier: Apache-2.0
#include "bundle/manifest_text.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace prewarm::bundle::manifest_text {

std::unexpected<Error>
format_error(std::string message)
{
  return fail(Errc::verify, std::move(message), "E_MANIFEST_FORMAT");
}

std::unexpected<Error>
line_error(std::size_t line, std::string_view message)
{
  return format_error(fmt::format("manifest:{}: {}", line, message));
}

bool
is_id(std::string_view text)
{
  if (text.empty() || text.size() > 128) {
    return false;
  }
  const auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_alnum(text[0])) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [&](char c) {
    return lower_alnum(c) || c == '.' || c == '_' || c == '-';
  });
}

bool
is_name(std::string_view text)
{
  if (text.empty() || text.size() > 128) {
    return false;
  }
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(text[0])) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [&](char c) {
    return alnum(c) || c == '.' || c == '_' || c == '/' || c == '-';
  });
}

// VALUE, TEXT: printable ASCII, no leading/trailing space, no double space
// (the line rule), 1..1024 bytes.
bool
is_text(std::string_view text)
{
  if (text.empty() || text.size() > k_max_text || text.front() == ' ' || text.back() == ' ') {
    return false;
  }
  if (text.find("  ") != std::string_view::npos) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

bool
is_component(std::string_view text)
{
  if (text.empty() || text.size() > k_max_component || text == "." || text == "..") {
    return false;
  }
  return text.find('/') == std::string_view::npos && is_printable_utf8(text);
}

bool
is_sha256(std::string_view text)
{
  return is_lower_hex(text, 64);
}

// U64: decimal, no sign, no leading zero (one spelling per value).
std::optional<std::uint64_t>
parse_u64(std::string_view text)
{
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) {
    return std::nullopt;
  }
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

std::string
ascii_lower(std::string_view text)
{
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

// Splits "a b c" into at most `max_fields` fields; the last keeps its spaces.
std::vector<std::string_view>
split_fields(std::string_view text, std::size_t max_fields)
{
  std::vector<std::string_view> out;
  while (out.size() + 1 < max_fields) {
    const auto space = text.find(' ');
    if (space == std::string_view::npos) {
      break;
    }
    out.push_back(text.substr(0, space));
    text.remove_prefix(space + 1);
  }
  out.push_back(text);
  return out;
}

std::optional<std::pair<std::string_view, std::string_view>>
two_fields(std::string_view text)
{
  const auto fields = split_fields(text, 2);
  if (fields.size() != 2 || fields[1].find(' ') != std::string_view::npos) {
    return std::nullopt;
  }
  return std::pair{fields[0], fields[1]};
}

// The byte rules, before any field is looked at: printable ASCII, LF line
// ends, no empty line, no leading, trailing or double space.
Status
check_bytes(std::string_view bytes)
{
  if (bytes.empty()) {
    return format_error("manifest: empty");
  }
  if (bytes.back() != '\n') {
    return format_error("manifest: does not end with a line feed (truncated?)");
  }
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\n') {
      if (column == 1) {
        return line_error(line, "empty line");
      }
      if (bytes[i - 1] == ' ') {
        return line_error(line, "trailing space");
      }
      ++line;
      column = 1;
      continue;
    }
    if (c == '\r') {
      return line_error(line, fmt::format("column {}: carriage return (lines end in LF only)", column));
    }
    if (c < 0x20 || c > 0x7e) {
      return line_error(line, fmt::format("column {}: byte 0x{:02x} is not printable ASCII", column, static_cast<unsigned char>(c)));
    }
    if (c == ' ' && (column == 1 || bytes[i - 1] == ' ')) {
      return line_error(line, fmt::format("column {}: leading or double space", column));
    }
    ++column;
  }
  return {};
}

Lines::Lines(std::string_view bytes)
{
  while (!bytes.empty()) {
    const auto lf = bytes.find('\n');
    text.push_back(bytes.substr(0, lf));
    bytes.remove_prefix(lf + 1);
  }
}

Result<std::string_view>
Lines::expect_key(std::string_view key)
{
  if (next >= text.size()) {
    return line_error(next + 1, fmt::format("missing {} line (truncated?)", in_quotes(key)));
  }
  const auto line = text[next];
  if (line.size() <= key.size() + 1 || line.substr(0, key.size()) != key || line[key.size()] != ' ') {
    return line_error(next + 1, fmt::format("expected {} here, found {}", in_quotes(std::string(key) + " ..."), in_quotes(line.substr(0, 40))));
  }
  ++next;
  return line.substr(key.size() + 1);
}

} // namespace prewarm::bundle::manifest_text
