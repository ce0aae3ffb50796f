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

// Translation phase 2: a backslash before a newline joins the lines.
std::string
splice_lines(std::string_view text)
{
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      std::size_t j = i + 1;
      while (j < text.size() && blank(text[j])) {
        ++j; // clang accepts blanks between the backslash and the newline
      }
      if (j < text.size() && text[j] == '\n') {
        i = j;
        continue;
      }
    }
    out += text[i];
  }
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
  const auto alnum = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  for (auto at = t.find('\''); at != std::string_view::npos; at = t.find('\'', at + 1)) {
    if (at > 0 && at + 1 < t.size() && alnum(t[at - 1]) && alnum(t[at + 1])) {
      return false;
    }
  }
  // A `<name>` header name is lexed whole by the compiler: `<a//b.h>` or
  // `<a/*b.h>` hold no comment.
  for (auto at = t.find('<'); at != std::string_view::npos; at = t.find('<', at + 1)) {
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

// --- options ---------------------------------------------------------------

// Blank-separated words, quotes kept (a driver that splits at blanks only).
std::vector<std::string>
split_at_blanks(std::string_view options)
{
  std::vector<std::string> words;
  std::string word;
  for (const char c : options) {
    if (blank(c) || c == '\n') {
      if (!word.empty()) {
        words.push_back(std::move(word));
        word.clear();
      }
    } else {
      word += c;
    }
  }
  if (!word.empty()) {
    words.push_back(std::move(word));
  }
  return words;
}

// Words as a shell splits them: quotes group and vanish, a backslash
// escapes (outside single quotes). Empty `unsure` unless a quote is open.
std::vector<std::string>
split_as_shell(std::string_view options, std::string& unsure)
{
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const char c = options[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < options.size()) {
        word += options[++i];
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < options.size()) {
      word += options[++i];
      in_word = true;
    } else if (blank(c) || c == '\n') {
      if (in_word) {
        words.push_back(std::move(word));
        word.clear();
        in_word = false;
      }
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    unsure = "the build options leave a quote open";
  }
  if (in_word) {
    words.push_back(std::move(word));
  }
  return words;
}

void
add_unique(std::vector<std::string>& list, std::string value)
{
  if (std::find(list.begin(), list.end(), value) == list.end()) {
    list.push_back(std::move(value));
  }
}

// Reads one splitting's words into `out`.
void
read_option_words(const std::vector<std::string>& words, IncludeOptions& out)
{
  static constexpr std::string_view k_dir_options[] = {"-iquote", "-isystem", "-idirafter", "-I"};
  static constexpr std::string_view k_file_options[] = {"-include", "-imacros"};
  for (std::size_t i = 0; i < words.size() && out.unsure.empty(); ++i) {
    const std::string_view w = words[i];
    // The value of an option spelled apart or joined; empty when absent.
    const auto value = [&](std::string_view option) -> std::string {
      if (w.size() > option.size()) {
        return std::string(w.substr(option.size()));
      }
      return i + 1 < words.size() ? words[++i] : std::string{};
    };
    bool known = false;
    for (const auto option : k_file_options) {
      if (!known && w.starts_with(option)) {
        known = true;
        if (auto file = value(option); !file.empty()) {
          add_unique(out.forced, std::move(file));
        }
      }
    }
    for (const auto option : k_dir_options) {
      if (!known && w.starts_with(option)) {
        known = true;
        auto dir = value(option);
        if (dir == "-") {
          out.unsure = "the build options use `-I-` (an obsolete split of the search path)";
        } else if (!dir.empty()) {
          add_unique(out.dirs, std::move(dir));
        }
      }
    }
    if (known) {
      continue;
    }
    // Anything else that can move the search or read options from a file.
    if (w.starts_with("@")) {
      out.unsure = fmt::format("the build options read a response file ({})", w);
    } else if (w.starts_with("-i") || w.starts_with("--include") || w.starts_with("--sysroot") || w.starts_with("-X") ||
               w.starts_with("-fmodule") || w.starts_with("-F") || w.starts_with("--system-header") ||
               w.starts_with("-cxx-isystem")) {
      out.unsure = fmt::format("the build options hold {}, which changes where headers are found", w);
    }
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
    for (const auto& name : scanned.names) {
      resolve(name, includer_dir, depth);
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
    if (!found && m_unsure.empty()) {
      m_unsure = fmt::format("`{}` is in none of the places the layer looks (the compiler would find it elsewhere, or fail)", name);
    }
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

  std::vector<std::string> m_dirs;
  const std::vector<EmbeddedHeader>& m_embedded;
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
  if (lexes_as_c(text)) {
    text = without_comments(text);
  }
  const std::string_view t = text;
  for (std::size_t i = 0; i < t.size();) {
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
      if (!is_include_directive(word)) {
        continue;
      }
      j = end;
      std::string name;
      if (!skip_blanks_and_comments(t, j) || !read_header_name(t, j, name)) {
        out.unsure = fmt::format("a computed #{} (the file is named by a macro)", word);
        return out;
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

IncludeOptions
parse_include_options(std::string_view options)
{
  IncludeOptions out;
  std::string quote_problem;
  const auto shell_words = split_as_shell(options, quote_problem);
  read_option_words(shell_words, out);
  if (out.unsure.empty()) {
    read_option_words(split_at_blanks(options), out);
  }
  if (out.unsure.empty() && !quote_problem.empty()) {
    out.unsure = quote_problem;
  }
  return out;
}

IncludeSearch
default_include_search()
{
  IncludeSearch search;
  for (const char* variable : {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH"}) {
    const char* value = std::getenv(variable);
    if (value == nullptr || *value == '\0') {
      continue;
    }
    std::string_view rest = value;
    for (;;) {
      const auto colon = rest.find(':');
      const auto dir = rest.substr(0, colon);
      add_unique(search.dirs, dir.empty() ? std::string(".") : std::string(dir));
      if (colon == std::string_view::npos) {
        break;
      }
      rest.remove_prefix(colon + 1);
    }
  }
  for (const char* dir : {"/usr/local/include",
#if defined(__x86_64__)
                          "/usr/include/x86_64-linux-gnu",
#elif defined(__aarch64__)
                          "/usr/include/aarch64-linux-gnu",
#endif
                          "/usr/include"}) {
    add_unique(search.dirs, dir);
  }
  return search;
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
