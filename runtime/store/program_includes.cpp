// SPDX-License-Identifier: Apache-2.0
#include "store/program_includes.hpp"

#include "base/digest.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prewarm::store {
namespace {

// Limits: beyond them the program is passed through, never keyed partly.
constexpr std::size_t k_max_depth = 200;        // clang's own nesting limit
constexpr std::size_t k_max_files = 4096;       // files read
constexpr std::size_t k_max_candidates = 65536; // paths looked at
constexpr std::uint64_t k_max_file_bytes = std::uint64_t{64} << 20;

bool
ident_char(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '\\';
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

void
add_unique(std::vector<std::string>& list, std::string value)
{
  if (std::find(list.begin(), list.end(), value) == list.end()) {
    list.push_back(std::move(value));
  }
}

// --- files -----------------------------------------------------------------

enum class FileState { absent, directory, regular, unsure };

struct Probe
{
  FileState state = FileState::absent;
  std::string content; // regular
  std::string why;     // unsure
};

// Follows symbolic links (headers are often links), never blocks (a FIFO is
// refused before it is opened, and opened O_NONBLOCK in case it was swapped
// in since), and reads a regular file whole.
Probe
probe(const std::string& path)
{
  Probe out;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return out;
    }
    out.state = FileState::unsure;
    out.why = fmt::format("cannot look at {}: {}", path, errno_message(errno));
    return out;
  }
  if (S_ISDIR(st.st_mode)) {
    out.state = FileState::directory;
    return out;
  }
  out.state = FileState::unsure;
  if (!S_ISREG(st.st_mode)) {
    out.why = fmt::format("{} is {}, not a regular file", path, file_type_name(st.st_mode));
    return out;
  }
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    out.why = fmt::format("cannot read {}: {}", path, errno_message(errno));
    return out;
  }
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    out.why = fmt::format("{} is not a regular file", path);
    return out;
  }
  if (static_cast<std::uint64_t>(st.st_size) > k_max_file_bytes) {
    out.why = fmt::format("{} is over {} bytes", path, k_max_file_bytes);
    return out;
  }
  std::string content;
  char buffer[1 << 14];
  for (;;) {
    const auto n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      out.why = fmt::format("cannot read {}: {}", path, errno_message(errno));
      return out;
    }
    if (n == 0) {
      break;
    }
    content.append(buffer, static_cast<std::size_t>(n));
    if (content.size() > k_max_file_bytes) {
      out.why = fmt::format("{} is over {} bytes", path, k_max_file_bytes);
      return out;
    }
  }
  out.state = FileState::regular;
  out.content = std::move(content);
  return out;
}

std::string
join_path(const std::string& dir, const std::string& name)
{
  // An absolute name replaces the directory, as it does for the compiler.
  return (std::filesystem::path(dir) / name).string();
}

std::string
directory_of(const std::string& path)
{
  return std::filesystem::path(path).parent_path().string();
}

// One walk over a program's include graph.
class IncludeWalk
{
public:
  IncludeWalk(std::vector<std::string> dirs, const std::vector<EmbeddedHeader>& embedded)
    : m_dirs(std::move(dirs)), m_embedded(embedded)
  {
  }

  // Text included from `includer_dir` ("" for the program's source).
  void scan_text(std::string_view text, const std::string& includer_dir, std::size_t depth)
  {
    if (!m_unsure.empty()) {
      return;
    }
    if (depth > k_max_depth) {
      m_unsure = fmt::format("headers nest deeper than {}", k_max_depth);
      return;
    }
    const auto scanned = scan_include_directives(text);
    if (!scanned.unsure.empty()) {
      m_unsure = scanned.unsure;
      return;
    }
    m_definitions.insert(m_definitions.end(), scanned.definitions.begin(), scanned.definitions.end());
    for (const auto& operand : scanned.computed) {
      m_computed.push_back({operand, includer_dir, depth});
    }
    for (const auto& name : scanned.names) {
      resolve(name, includer_dir, depth);
    }
  }

  // Expands every computed include with every definition seen so far and
  // resolves what it names, until no new file brings a new definition.
  void resolve_computed(const std::vector<MacroDefinition>& option_macros)
  {
    for (int round = 0; m_unsure.empty(); ++round) {
      if (round == 8) {
        m_unsure = "computed includes that keep naming files with new definitions";
        return;
      }
      const auto definitions = m_definitions.size();
      const auto computed = m_computed; // resolving may add to both
      for (const auto& c : computed) {
        auto expanded = expand_include_operand(c.operand, option_macros, m_definitions);
        if (!expanded.unsure.empty()) {
          m_unsure = std::move(expanded.unsure);
          return;
        }
        for (const auto& name : expanded.names) {
          resolve(name, c.includer_dir, c.depth);
        }
      }
      if (m_definitions.size() == definitions && m_computed.size() == computed.size()) {
        return;
      }
    }
  }

  void resolve(const std::string& name, const std::string& includer_dir, std::size_t depth)
  {
    m_any = true;
    bool found = false;
    for (const auto& header : m_embedded) {
      if (header.name == name) {
        found = true;
        if (m_embedded_scanned.insert(name).second) {
          scan_text(header.source, "", depth + 1);
        }
      }
    }
    std::vector<std::string> candidates{join_path(includer_dir, name)};
    for (const auto& dir : m_dirs) {
      candidates.push_back(join_path(dir, name));
    }
    for (const auto& path : candidates) {
      if (!m_unsure.empty()) {
        return;
      }
      found = look_at(path, depth) || found;
    }
    // Found nowhere: keyed as absent from every place above, so that it
    // appearing in any of them is a miss. The compiler may still find it in
    // its own installation (a dead branch's <metal_stdlib> in hashcat's
    // headers is never read at all), which the driver's identity keys.
    (void)found;
  }

  const std::string& unsure() const { return m_unsure; }
  bool any() const { return m_any; }

  std::string listing() const
  {
    std::string text;
    for (const auto& [path, state] : m_seen) {
      text += fmt::format("{} {}\n", state, path);
    }
    return text;
  }

private:
  // Records `path`'s state; true when it is a file the name can resolve to.
  bool look_at(const std::string& path, std::size_t depth)
  {
    if (const auto it = m_seen.find(path); it != m_seen.end()) {
      return it->second.starts_with("sha256:");
    }
    if (m_seen.size() >= k_max_candidates) {
      m_unsure = fmt::format("more than {} candidate header paths", k_max_candidates);
      return false;
    }
    auto found = probe(path);
    switch (found.state) {
      case FileState::absent:
        m_seen.emplace(path, "absent");
        return false;
      case FileState::directory:
        m_seen.emplace(path, "directory");
        return false;
      case FileState::unsure:
        m_unsure = found.why;
        return false;
      case FileState::regular:
        break;
    }
    m_seen.emplace(path, "sha256:" + sha256_hex(found.content));
    if (++m_files > k_max_files) {
      m_unsure = fmt::format("more than {} header files", k_max_files);
      return false;
    }
    scan_text(found.content, directory_of(path), depth + 1);
    return true;
  }

  struct Computed
  {
    std::string operand;
    std::string includer_dir;
    std::size_t depth = 0;
  };

  std::vector<std::string> m_dirs;
  const std::vector<EmbeddedHeader>& m_embedded;
  std::vector<MacroDefinition> m_definitions;
  std::vector<Computed> m_computed;
  std::set<std::string> m_embedded_scanned;
  std::map<std::string, std::string> m_seen; // path -> state
  std::size_t m_files = 0;
  std::string m_unsure;
  bool m_any = false;
};

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
  const auto rest_of_line = [&](std::size_t from) { return t.substr(from, t.find('\n', from) - from); };
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
      std::size_t j = i + (t[i] == '#' ? 1 : 2);
      i = j;
      if (!skip_blanks_and_comments(t, j)) {
        continue;
      }
      std::size_t end = j;
      while (end < t.size() && ident_char(t[end])) {
        ++end;
      }
      const auto word = t.substr(j, end - j);
      if (word.find("\\u") != std::string_view::npos || word.find("\\U") != std::string_view::npos) {
        out.unsure = "a directive name is written with a universal character name";
        return out;
      }
      if (word == "define" || word == "undef") {
        if (auto def = parse_macro_line(rest_of_line(end), word == "undef")) {
          out.definitions.push_back(std::move(*def));
        }
        continue;
      }
      if (!is_include_directive(word)) {
        continue;
      }
      j = end;
      std::string name;
      if (!skip_blanks_and_comments(t, j)) {
        out.unsure = fmt::format("a #{} that names no file", word);
        return out;
      }
      if (!read_header_name(t, j, name)) {
        if (!exact || word == "embed") {
          out.unsure = fmt::format("a computed #{} (the file is named by a macro) in a text read with its comments", word);
          return out;
        }
        out.computed.emplace_back(rest_of_line(j));
        continue;
      }
      out.names.push_back(std::move(name));
      i = j;
      continue;
    }
    if (ident_char(t[i]) && (i == 0 || !ident_char(t[i - 1]))) {
      std::size_t end = i;
      while (end < t.size() && ident_char(t[end])) {
        ++end;
      }
      const auto word = t.substr(i, end - i);
      i = end;
      if (!is_include_operator(word)) {
        continue;
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
        return out;
      }
      out.names.push_back(std::move(name));
      i = j;
      continue;
    }
    ++i;
  }
  return out;
}

std::string
IncludeDigest::digest() const
{
  return sha256_hex(listing);
}

IncludeDigest
digest_includes(std::string_view source, std::string_view options, const IncludeSearch& search,
                const std::vector<EmbeddedHeader>& embedded)
{
  IncludeDigest out;
  auto parsed = parse_include_options(options);
  if (!parsed.unsure.empty()) {
    out.complete = false;
    out.unsure = std::move(parsed.unsure);
    return out;
  }
  auto dirs = parsed.dirs;
  for (const auto& dir : search.dirs) {
    add_unique(dirs, dir);
  }
  IncludeWalk walk(std::move(dirs), embedded);
  // -include FILE: first looked for in the working directory, then like a
  // quoted include of the source.
  for (const auto& file : parsed.forced) {
    walk.resolve(file, "", 0);
  }
  walk.scan_text(source, "", 0);
  walk.resolve_computed(parsed.macros);
  if (!walk.unsure().empty()) {
    out.complete = false;
    out.unsure = walk.unsure();
    return out;
  }
  out.any = walk.any();
  out.listing = walk.listing();
  return out;
}

std::vector<std::pair<std::string, std::string>>
include_key_fields(const IncludeDigest& digest)
{
  if (!digest.any) {
    return {};
  }
  return {{"includes", digest.digest()}};
}

} // namespace prewarm::store
