// SPDX-License-Identifier: Apache-2.0
#include "base/encoding.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>

namespace prewarm {

namespace {

constexpr std::string_view k_hex_digits = "0123456789abcdef";
constexpr std::string_view k_b64 =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
hex_value(char c)
{
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

int
b64_value(char c)
{
  const auto pos = k_b64.find(c);
  return pos == std::string_view::npos ? -1 : static_cast<int>(pos);
}

} // namespace

std::string
to_hex(std::string_view bytes)
{
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) {
    out.push_back(k_hex_digits[c >> 4]);
    out.push_back(k_hex_digits[c & 0xf]);
  }
  return out;
}

std::optional<std::string>
from_hex(std::string_view hex)
{
  if (hex.size() % 2 != 0) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_value(hex[i]);
    const int lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>((hi << 4) | lo));
  }
  return out;
}

bool
is_lower_hex(std::string_view text, std::size_t length)
{
  if (text.size() != length) {
    return false;
  }
  for (const char c : text) {
    if (hex_value(c) < 0) {
      return false;
    }
  }
  return true;
}

std::string
base64_encode(std::string_view bytes)
{
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto at = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out.push_back(k_b64[(v >> 18) & 63]);
    out.push_back(k_b64[(v >> 12) & 63]);
    out.push_back(k_b64[(v >> 6) & 63]);
    out.push_back(k_b64[v & 63]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const std::uint32_t v = at(i) << 16;
    out.push_back(k_b64[(v >> 18) & 63]);
    out.push_back(k_b64[(v >> 12) & 63]);
    out += "==";
  } else if (rest == 2) {
    const std::uint32_t v = (at(i) << 16) | (at(i + 1) << 8);
    out.push_back(k_b64[(v >> 18) & 63]);
    out.push_back(k_b64[(v >> 12) & 63]);
    out.push_back(k_b64[(v >> 6) & 63]);
    out.push_back('=');
  }
  return out;
}

std::optional<std::string>
base64_decode(std::string_view text)
{
  if (text.size() % 4 != 0) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    std::array<int, 4> v{};
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      if (c == '=') {
        // Padding only at the end of the last quantum, at most two.
        if (!last || k < 2) {
          return std::nullopt;
        }
        ++pad;
        v[static_cast<std::size_t>(k)] = 0;
        continue;
      }
      if (pad > 0) {
        return std::nullopt; // data after padding
      }
      v[static_cast<std::size_t>(k)] = b64_value(c);
      if (v[static_cast<std::size_t>(k)] < 0) {
        return std::nullopt;
      }
    }
    const std::uint32_t word = (static_cast<std::uint32_t>(v[0]) << 18) |
                               (static_cast<std::uint32_t>(v[1]) << 12) |
                               (static_cast<std::uint32_t>(v[2]) << 6) |
                               static_cast<std::uint32_t>(v[3]);
    out.push_back(static_cast<char>((word >> 16) & 0xff));
    if (pad < 2) {
      out.push_back(static_cast<char>((word >> 8) & 0xff));
    } else if ((word & 0xffff) != 0) {
      return std::nullopt; // non-zero unused bits: a second spelling
    }
    if (pad < 1) {
      out.push_back(static_cast<char>(word & 0xff));
    } else if ((word & 0xff) != 0) {
      return std::nullopt;
    }
  }
  return out;
}

bool
is_printable_utf8(std::string_view text)
{
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      if (lead < 0x20 || lead == 0x7f) {
        return false;
      }
      ++i;
      continue;
    }
    std::size_t length = 0;
    char32_t code = 0;
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
      code = lead & 0x1fu;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      code = lead & 0x0fu;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      code = lead & 0x07u;
    } else {
      return false; // a continuation byte first, an overlong 2-byte lead, or past U+10FFFF
    }
    if (i + length > text.size()) {
      return false;
    }
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0u) != 0x80u) {
        return false;
      }
      code = (code << 6) | (next & 0x3fu);
    }
    const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
    const bool surrogate = code >= 0xd800 && code <= 0xdfff;
    const bool c1_control = code >= 0x80 && code <= 0x9f;
    if (overlong || surrogate || c1_control || code > 0x10ffff) {
      return false;
    }
    i += length;
  }
  return true;
}

std::string
shell_single_quoted(std::string_view text)
{
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string
in_quotes(std::string_view text)
{
  // Control bytes are escaped: a name from a bundle (a tar entry, a slice id)
  // must not be able to end the line and forge another log line, or move the
  // terminal's cursor.
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

std::string_view
trim(std::string_view text, std::string_view blank)
{
  const auto first = text.find_first_not_of(blank);
  if (first == std::string_view::npos) {
    return {};
  }
  return text.substr(first, text.find_last_not_of(blank) - first + 1);
}

} // namespace prewarm
