// SPDX-License-Identifier: Apache-2.0
// The lexical rules of the bundle manifest (bundle_manifest.hpp: the
// grammar): the byte rules, the line reader, and the spelling of IDs, NAMEs,
// VALUEs, path components, digests and numbers. Internal to prewarm_bundle:
// bundle_manifest.cpp validates and parses with these.
#pragma once

#include "base/directory_tree.hpp"
#include "base/error.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prewarm::bundle::manifest_text {

inline constexpr std::size_t k_max_text = 1024;
inline constexpr std::size_t k_max_component = 255;

// E_MANIFEST_FORMAT (Errc::verify); line_error names "manifest:LINE".
std::unexpected<Error> format_error(std::string message);
std::unexpected<Error> line_error(std::size_t line, std::string_view message);

// ID: 1..128 of [a-z0-9._-], starting with a letter or digit.
bool is_id(std::string_view text);

// NAME: 1..128 of [A-Za-z0-9._/-], starting with a letter or digit.
bool is_name(std::string_view text);

// VALUE, TEXT: printable ASCII, no leading/trailing space, no double space
// (the line rule), 1..1024 bytes.
bool is_text(std::string_view text);

// A path component: 1..255 bytes of printable UTF-8 (base/encoding.hpp)
// without "/", not "." or "..".
bool is_component(std::string_view text);


// 64 lowercase hex digits.
bool is_sha256(std::string_view text);

// U64: decimal, no sign, no leading zero (one spelling per value).
std::optional<std::uint64_t> parse_u64(std::string_view text);

std::string ascii_lower(std::string_view text);

// "a/b/c" -> "a/b"; "a" -> "": the one of base/directory_tree.hpp.
using prewarm::parent_of;

// Splits "a b c" into at most `max_fields` fields; the last keeps its spaces.
std::vector<std::string_view> split_fields(std::string_view text, std::size_t max_fields);

// "a b" -> {"a", "b"}; nullopt unless exactly two fields.
std::optional<std::pair<std::string_view, std::string_view>> two_fields(std::string_view text);

// The byte rules, before any field is looked at: printable ASCII, LF line
// ends, no empty line, no leading, trailing or double space.
Status check_bytes(std::string_view bytes);

// The manifest's lines (without their LF) and where the parser stands.
struct Lines
{
  std::vector<std::string_view> text;
  std::size_t next = 0; // index of the next line; its line number is next + 1

  explicit Lines(std::string_view bytes);

  // The value of the next line, which must be "KEY value".
  Result<std::string_view> expect_key(std::string_view key);
};

// One site-packages directory (APATH: absolute, normal components, 2..1024
// bytes), as validate() and the reader check it (bundle_manifest_validation.cpp).
Status validate_site_packages(std::string_view path);

} // namespace prewarm::bundle::manifest_text
