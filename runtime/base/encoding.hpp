// SPDX-License-Identifier: Apache-2.0
// Strict encodings for signed text: exactly one accepted spelling per value.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace prewarm {

std::string to_hex(std::string_view bytes); // lowercase
// Lowercase hex only (uppercase would give two spellings of one value).
std::optional<std::string> from_hex(std::string_view hex);
bool is_lower_hex(std::string_view text, std::size_t length);

std::string base64_encode(std::string_view bytes); // RFC 4648, with padding
// Canonical RFC 4648 only: no whitespace, correct padding, zero unused bits.
std::optional<std::string> base64_decode(std::string_view text);

// `"text"`, for paths and values in messages; control bytes escaped as \n,
// \t, \r, \xHH.
std::string in_quotes(std::string_view text);

// `'text'` for a POSIX shell: single quotes, each ' written '\''.
std::string shell_single_quoted(std::string_view text);

// Well-formed UTF-8 (no overlong form, surrogate or code point above
// U+10FFFF) without a control character (C0, DEL, C1): a name an application
// may give a cache entry and a terminal shows as it is.
bool is_printable_utf8(std::string_view text);

inline constexpr std::string_view k_whitespace = " \t\r\n\v\f";
// `text` without the leading and trailing characters of `blank`.
std::string_view trim(std::string_view text, std::string_view blank = k_whitespace);

} // namespace prewarm
