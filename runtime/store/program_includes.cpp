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
