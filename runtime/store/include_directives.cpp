// SPDX-License-Identifier: Apache-2.0
#include "store/include_directives.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::store {
namespace {

bool
ident_char(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         c == '\\';
}

bool
blank(char c)
{
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

// The first of `set`'s characters at or after `from` (npos when none): one
// pass over the text, where string_view::find_first_of asks memchr once
// per character (a 2.4 MB header took 20 ms that way).
std::size_t
find_any(std::string_view t, std::size_t from, std::string_view set)
{
  bool wanted[256] = {};
  for (const char c : set) {
    wanted[static_cast<unsigned char>(c)] = true;
  }
  for (std::size_t i = from; i < t.size(); ++i) {
    if (wanted[static_cast<unsigned char>(t[i])]) {
      return i;
    }
  }
  return std::string_view::npos;
}

// Translation phase 2: a backslash before a newline joins the lines.
std::string
splice_lines(std::string_view text)
{
  // Copied in runs between backslashes: a header of megabytes (hashcat's
  // inc_common.cl: 2.4 MB) is read at every build.
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  for (auto at = text.find('\\'); at != std::string_view::npos; at = text.find('\\', i)) {
    std::size_t j = at + 1;
    while (j < text.size() && blank(text[j])) {
      ++j; // clang accepts blanks between the backslash and the newline
    }
    if (j < text.size() && text[j] == '\n') {
      out.append(text.substr(i, at - i));
      i = j + 1;
    } else {
      out.append(text.substr(i, at + 1 - i));
      i = at + 1;
    }
  }
  out.append(text.substr(std::min(i, text.size())));
  return out;
}

// Translation phase 3's comments, each replaced by one space (a block
// comment's newlines too, as the compiler does), string and character
// literals kept whole. Only for text whose literals lex as C's: a raw
// string (C++ for OpenCL), a digit separator (1'000) or a header name
// holding `//` could hide a `/*` from this reading, so such text keeps its comments (scanned as code, which
// only adds names).
bool
lexes_as_c(std::string_view t)
{
  if (t.find("R\"") != std::string_view::npos) {
    return false;
  }
  const auto word_char = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
  };
  // A digit separator: a quote inside a number (1'000, 0xFF'FF), not the
  // apostrophe of a comment's "don't" nor a prefixed character literal (L'a').
  for (auto at = t.find('\''); at != std::string_view::npos; at = t.find('\'', at + 1)) {
    std::size_t start = at;
    while (start > 0 && word_char(t[start - 1])) {
      --start;
    }
    if (start < at && t[start] >= '0' && t[start] <= '9' && at + 1 < t.size() && word_char(t[at + 1])) {
      return false;
    }
  }
  // A `<name>` header name is lexed whole by the compiler: `<a//b.h>` or
  // `<a/*b.h>` hold no comment.
  for (auto at = t.find('<'); at != std::string_view::npos; at = t.find('<', at + 1)) {
    std::size_t back = at;
    while (back > 0 && (blank(t[back - 1]) || t[back - 1] == '(')) {
      --back;
    }
    std::size_t word = back;
    while (word > 0 && word_char(t[word - 1])) {
      --word;
    }
    const auto before = t.substr(word, back - word);
    if (!before.ends_with("include") && !before.ends_with("include_next") && !before.ends_with("import") &&
        !before.ends_with("embed")) {
      continue;
    }
    const auto line = t.substr(at, t.find_first_of(">\n", at) - at);
    if (line.find("//") != std::string_view::npos || line.find("/*") != std::string_view::npos) {
      return false;
    }
  }
  return true;
}

std::string
without_comments(std::string_view t)
{
  std::string out;
  out.reserve(t.size());
  for (std::size_t i = 0; i < t.size();) {
    // Plain text up to the next quote or slash, in one run.
    const auto special = std::min(find_any(t, i, "\"'/"), t.size());
    out.append(t.substr(i, special - i));
    i = special;
    if (i >= t.size()) {
      break;
    }
    if (t[i] == '"' || t[i] == '\'') {
      // A literal ends at its closing quote or, unterminated, at the line's end.
      const char quote = t[i];
      out += t[i++];
      while (i < t.size() && t[i] != '\n') {
        const char c = t[i++];
        out += c;
        if (c == '\\' && i < t.size() && t[i] != '\n') {
          out += t[i++];
        } else if (c == quote) {
          break;
        }
      }
    } else if (t.compare(i, 2, "/*") == 0) {
      const auto end = t.find("*/", i + 2);
      i = end == std::string_view::npos ? t.size() : end + 2;
      out += ' ';
    } else if (t.compare(i, 2, "//") == 0) {
      i = std::min(t.find('\n', i), t.size());
      out += ' ';
    } else {
      out += t[i++];
    }
  }
  return out;
}

// Skips blanks and comments on the current line; false at a `//` comment,
// a newline or the end (no operand follows on this line).
bool
skip_blanks_and_comments(std::string_view t, std::size_t& i)
{
  while (i < t.size()) {
    if (blank(t[i])) {
      ++i;
    } else if (t.compare(i, 2, "/*") == 0) {
      const auto end = t.find("*/", i + 2);
      i = end == std::string_view::npos ? t.size() : end + 2;
    } else {
      return t[i] != '\n' && t.compare(i, 2, "//") != 0;
    }
  }
  return false;
}

// A header name at `i` ("name" or <name>, on one line); false when none.
bool
read_header_name(std::string_view t, std::size_t& i, std::string& name)
{
  if (i >= t.size() || (t[i] != '"' && t[i] != '<')) {
    return false;
  }
  const char close = t[i] == '"' ? '"' : '>';
  const auto end = t.find_first_of(std::string{close, '\n'}, i + 1);
  if (end == std::string_view::npos || t[end] != close || end == i + 1) {
    return false;
  }
  name = std::string(t.substr(i + 1, end - i - 1));
  i = end + 1;
  return true;
}

bool
is_include_directive(std::string_view word)
{
  return word == "include" || word == "include_next" || word == "import" || word == "embed";
}

bool
is_include_operator(std::string_view word)
{
  return word == "__has_include" || word == "__has_include_next" || word == "__has_embed";
}

std::string_view
rest_of_line(std::string_view t, std::size_t from)
{
  return t.substr(from, t.find('\n', from) - from);
}

// Whether the scan goes on after one directive or operator (stop: `unsure`
// is set).
enum class Scan { go_on, stop };

// A directive at t[i]: `#` (or the digraph `%:`), blanks or comments, the
// name. Taken wherever a `#` stands, not only at a line's start: a false
// find only adds candidates or passes the program through. `i` moves past
// what was read.
Scan
scan_directive(std::string_view t, std::size_t& i, bool exact, ScannedIncludes& out)
{
  std::size_t j = i + (t[i] == '#' ? 1 : 2);
  i = j;
  if (!skip_blanks_and_comments(t, j)) {
    return Scan::go_on;
  }
  std::size_t end = j;
  while (end < t.size() && ident_char(t[end])) {
    ++end;
  }
  const auto word = t.substr(j, end - j);
  if (word.find("\\u") != std::string_view::npos || word.find("\\U") != std::string_view::npos) {
    out.unsure = "a directive name is written with a universal character name";
    return Scan::stop;
  }
  if (word == "define" || word == "undef") {
    if (auto def = parse_macro_line(rest_of_line(t, end), word == "undef")) {
      out.definitions.push_back(std::move(*def));
    }
    return Scan::go_on;
  }
  if (!is_include_directive(word)) {
    return Scan::go_on;
  }
  j = end;
  std::string name;
  if (!skip_blanks_and_comments(t, j)) {
    out.unsure = fmt::format("a #{} that names no file", word);
    return Scan::stop;
  }
  if (!read_header_name(t, j, name)) {
    if (!exact || word == "embed") {
      out.unsure = fmt::format("a computed #{} (the file is named by a macro) in a text read with its comments", word);
      return Scan::stop;
    }
    out.computed.emplace_back(rest_of_line(t, j));
    return Scan::go_on;
  }
  out.names.push_back(std::move(name));
  i = j;
  return Scan::go_on;
}

// An identifier at t[i]: a __has_include operator takes a header name.
Scan
scan_include_operator(std::string_view t, std::size_t& i, ScannedIncludes& out)
{
  std::size_t end = i;
  while (end < t.size() && ident_char(t[end])) {
    ++end;
  }
  const auto word = t.substr(i, end - i);
  i = end;
  if (!is_include_operator(word)) {
    return Scan::go_on;
  }
  std::size_t j = end;
  std::string name;
  bool literal = skip_blanks_and_comments(t, j) && t[j] == '(';
  if (literal) {
    ++j;
    literal = skip_blanks_and_comments(t, j) && read_header_name(t, j, name);
  }
  if (!literal) {
    out.unsure = fmt::format("a computed {} (the file is named by a macro)", word);
    return Scan::stop;
  }
  out.names.push_back(std::move(name));
  i = j;
  return Scan::go_on;
}

} // namespace

ScannedIncludes
scan_include_directives(std::string_view source)
{
  ScannedIncludes out;
  // Trigraphs (??= is #, ??/ a backslash) are off in clang's default modes
  // but on with -trigraphs; a text that has one is not read at all.
  for (auto at = source.find("??"); at != std::string_view::npos; at = source.find("??", at + 1)) {
    if (at + 2 < source.size() && std::string_view("=/'()!<>-").find(source[at + 2]) != std::string_view::npos) {
      out.unsure = "the source holds a trigraph";
      return out;
    }
  }
  auto text = splice_lines(source);
  // Without comments, a line's rest is what the compiler reads: a computed
  // include or a definition can be evaluated. Otherwise neither can.
  const bool exact = lexes_as_c(text);
  if (exact) {
    text = without_comments(text);
  }
  const std::string_view t = text;
  for (std::size_t i = 0; i < t.size();) {
    // Only a `#`, a `%:` or an identifier starting with `_` (the
    // __has_include operators) can start what is looked for: jump there.
    i = find_any(t, i, "#%_");
    if (i == std::string_view::npos) {
      break;
    }
    if (t[i] == '_' && i > 0 && ident_char(t[i - 1])) {
      while (i < t.size() && ident_char(t[i])) {
        ++i; // inside an identifier: not its start
      }
      continue;
    }
    if (t[i] == '%' && t.compare(i, 2, "%:") != 0) {
      ++i;
      continue;
    }
    // A directive: `#` (or the digraph `%:`), blanks or comments, the name.
    // Taken wherever a `#` stands, not only at a line's start: a false
    // find only adds candidates or passes the program through.
    if (t[i] == '#' || t.compare(i, 2, "%:") == 0) {
      if (scan_directive(t, i, exact, out) == Scan::stop) {
        return out;
      }
      continue;
    }
    if (ident_char(t[i]) && (i == 0 || !ident_char(t[i - 1]))) {
      if (scan_include_operator(t, i, out) == Scan::stop) {
        return out;
      }
      continue;
    }
    ++i;
  }
  return out;
}

} // namespace prewarm::store
