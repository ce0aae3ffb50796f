// SPDX-License-Identifier: Apache-2.0
#include "install/install_records.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "install/install_layout.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <sys/stat.h>

namespace prewarm::install {

namespace {

constexpr std::string_view k_marker_header = "prewarm-installed 1";
constexpr std::string_view k_state_header = "prewarm-state 1";
constexpr std::string_view k_start_header = "prewarm-start 1";

std::vector<std::string_view>
lines_of(std::string_view text)
{
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    if (end == std::string_view::npos) {
      lines.push_back(text); // no final LF: caught by the round-trip check
      break;
    }
    lines.push_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::vector<std::string_view>
words_of(std::string_view line)
{
  std::vector<std::string_view> words;
  std::size_t start = 0;
  for (;;) {
    const auto end = line.find(' ', start);
    words.push_back(line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) {
      return words;
    }
    start = end + 1;
  }
}

std::optional<std::uint64_t>
parse_u64(std::string_view text)
{
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

Error
malformed(std::string_view what, std::size_t line, std::string_view why)
{
  return Error(Errc::failed, fmt::format("{} line {}: {}", what, line, why), "E_RECORD_FORMAT");
}

Result<std::optional<std::string>>
read_optional(const std::filesystem::path& path)
{
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) {
    return std::optional<std::string>{};
  }
  PW_ASSIGN(std::string text, read_file(path.string(), 16 << 20));
  return std::optional<std::string>(std::move(text));
}

} // namespace

std::string
serialize(const InstalledMarker& m)
{
  std::string out = fmt::format("{}\nmanifest-sha256 {}\nchannel {}\nserial {}\ninstalled-at {}\n", k_marker_header,
                                m.manifest_sha256, m.channel, m.serial, format_rfc3339(m.installed_at));
  if (!m.host_fingerprint.empty()) {
    out += fmt::format("host-fingerprint {}\n", m.host_fingerprint);
  }
  if (!m.version.empty()) {
    out += fmt::format("version {}\n", m.version);
  }
  for (const auto& id : m.slice_ids) {
    out += fmt::format("slice {}\n", id);
  }
  for (const auto& k : m.kinds) {
    out += fmt::format("kind {} {} {}\n", k.kind, k.files, k.bytes);
  }
  return out;
}

Result<InstalledMarker>
parse_marker(std::string_view text)
{
  constexpr std::string_view what = "install marker";
  const auto lines = lines_of(text);
  if (lines.size() < 5 || lines[0] != k_marker_header) {
    return fail(malformed(what, 1, "not a prewarm install marker"));
  }
  InstalledMarker m;
  const auto field = [&](std::size_t i, std::string_view key) -> Result<std::string_view> {
    const auto w = words_of(lines[i]);
    if (w.size() != 2 || w[0] != key || w[1].empty()) {
      return fail(malformed(what, i + 1, fmt::format("expected {} VALUE", in_quotes(key))));
    }
    return w[1];
  };
  PW_ASSIGN(const auto digest, field(1, "manifest-sha256"));
  if (!is_lower_hex(digest, 64)) {
    return fail(malformed(what, 2, "manifest-sha256 is not 64 lowercase hex digits"));
  }
  m.manifest_sha256 = std::string(digest);
  PW_ASSIGN(const auto channel, field(2, "channel"));
  m.channel = std::string(channel);
  PW_ASSIGN(const auto serial_text, field(3, "serial"));
  const auto serial = parse_u64(serial_text);
  if (!serial) {
    return fail(malformed(what, 4, "serial is not a number"));
  }
  m.serial = *serial;
  PW_ASSIGN(const auto time_text, field(4, "installed-at"));
  auto time = parse_rfc3339(time_text);
  if (!time) {
    return fail(malformed(what, 5, time.error().message()));
  }
  m.installed_at = *time;
  for (std::size_t i = 5; i < lines.size(); ++i) {
    const auto w = words_of(lines[i]);
    if (i == 5 && w.size() == 2 && w[0] == "host-fingerprint" && is_lower_hex(w[1], 64)) {
      m.host_fingerprint = std::string(w[1]);
    } else if (w.size() == 2 && w[0] == "version" && is_version_id(w[1]) && m.version.empty() && m.slice_ids.empty()) {
      m.version = std::string(w[1]);
    } else if (w.size() == 2 && w[0] == "slice" && !w[1].empty()) {
      m.slice_ids.emplace_back(w[1]);
    } else if (w.size() == 4 && w[0] == "kind" && !w[1].empty() && parse_u64(w[2]) && parse_u64(w[3])) {
      m.kinds.push_back({std::string(w[1]), *parse_u64(w[2]), *parse_u64(w[3])});
    } else {
      return fail(malformed(what, i + 1,
                            "expected \"slice ID\", \"kind KIND FILES BYTES\", \"version ID\" or (line 6) \"host-fingerprint SHA256\""));
    }
  }
  if (serialize(m) != text) {
    return fail(malformed(what, lines.size(), "not in canonical form (truncated or edited?)"));
  }
  return m;
}

std::string
serialize(const ChannelState& state)
{
  std::string out = std::string(k_state_header) + "\n";
  for (const auto& [channel, mark] : state) {
    out += fmt::format("channel {} {} {}\n", channel, mark.serial, mark.manifest_sha256);
  }
  return out;
}

Result<ChannelState>
parse_state(std::string_view text)
{
  constexpr std::string_view what = "install state";
  const auto lines = lines_of(text);
  if (lines.empty() || lines[0] != k_state_header) {
    return fail(malformed(what, 1, "not a prewarm state file"));
  }
  ChannelState state;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto w = words_of(lines[i]);
    if (w.size() != 4 || w[0] != "channel" || w[1].empty() || !parse_u64(w[2]) || !is_lower_hex(w[3], 64)) {
      return fail(malformed(what, i + 1, "expected \"channel NAME SERIAL SHA256\""));
    }
    state[std::string(w[1])] = {*parse_u64(w[2]), std::string(w[3])};
  }
  if (serialize(state) != text) {
    return fail(malformed(what, lines.size(), "not in canonical form (truncated or edited?)"));
  }
  return state;
}

std::string_view
start_record_runtime()
{
  return PREWARM_VERSION;
}

std::optional<std::string>
serialize(const StartRecord& r)
{
  std::string out = fmt::format("{}\nruntime {}\nmanifest-sha256 {}\npolicy {}\nissued-at {}\nexpires {}\nframeworks {}\n",
                                k_start_header, r.runtime, r.manifest_sha256, r.policy, format_rfc3339(r.issued_at),
                                format_rfc3339(r.expires), r.frameworks_wanted ? "yes" : "no");
  bool recordable = true;
  const auto line = [&](std::string_view key, std::string_view text) {
    recordable = recordable && text.find('\n') == std::string_view::npos;
    out += fmt::format("{} {}\n", key, text);
  };
  for (const auto& dir : r.site_packages) {
    line("site-packages", dir);
  }
  for (const auto& text : r.refused) {
    line("refused", text);
  }
  line("root", r.root);
  out += fmt::format("environment {}\n", r.environment_recorded ? "recorded" : "at-exec");
  for (const auto& [name, paths] : {std::pair{"version", &r.version_paths}, std::pair{"root", &r.root_paths}}) {
    out += fmt::format("paths {}\n", name);
    for (const auto& dir : paths->directories) {
      line(dir.written ? "dir rw" : "dir r", dir.relative);
    }
    for (const auto& [variable, value] : paths->settings) {
      recordable = recordable && !variable.empty() && variable.find(' ') == std::string::npos;
      line(fmt::format("set {}", variable), value);
    }
    for (const auto& text : paths->warnings) {
      line("warn", text);
    }
  }
  return recordable ? std::optional<std::string>(std::move(out)) : std::nullopt;
}

Result<StartRecord>
parse_start_record(std::string_view text)
{
  constexpr std::string_view what = "start record";
  const auto lines = lines_of(text);
  if (lines.size() < 10 || lines[0] != k_start_header) {
    return fail(malformed(what, 1, "not a prewarm start record"));
  }
  StartRecord r;
  std::size_t i = 1;
  // The text after "KEY " on line i, when line i starts so.
  const auto rest = [&](std::string_view key) -> std::optional<std::string_view> {
    if (i < lines.size() && lines[i].size() > key.size() && lines[i].starts_with(key) && lines[i][key.size()] == ' ') {
      return lines[i].substr(key.size() + 1);
    }
    return std::nullopt;
  };
  const auto field = [&](std::string_view key) -> Result<std::string_view> {
    const auto value = rest(key);
    if (!value) {
      return fail(malformed(what, i + 1, fmt::format("expected {} VALUE", in_quotes(key))));
    }
    ++i;
    return *value;
  };
  const auto time = [&](std::string_view key) -> Result<SysSeconds> {
    PW_ASSIGN(const auto value, field(key));
    auto parsed = parse_rfc3339(value);
    if (!parsed) {
      return fail(malformed(what, i, parsed.error().message()));
    }
    return *parsed;
  };
  PW_ASSIGN(const auto runtime, field("runtime"));
  r.runtime = std::string(runtime);
  PW_ASSIGN(const auto digest, field("manifest-sha256"));
  r.manifest_sha256 = std::string(digest);
  PW_ASSIGN(const auto policy, field("policy"));
  r.policy = std::string(policy);
  PW_ASSIGN(r.issued_at, time("issued-at"));
  PW_ASSIGN(r.expires, time("expires"));
  PW_ASSIGN(const auto frameworks, field("frameworks"));
  r.frameworks_wanted = frameworks == "yes";
  for (; rest("site-packages"); ++i) {
    r.site_packages.emplace_back(*rest("site-packages"));
  }
  for (; rest("refused"); ++i) {
    r.refused.emplace_back(*rest("refused"));
  }
  PW_ASSIGN(const auto root, field("root"));
  r.root = std::string(root);
  PW_ASSIGN(const auto environment, field("environment"));
  r.environment_recorded = environment == "recorded";
  for (auto* paths : {&r.version_paths, &r.root_paths}) {
    PW_ASSIGN(const auto name, field("paths"));
    if (name != (paths == &r.version_paths ? "version" : "root")) {
      return fail(malformed(what, i, "expected the paths in the order version, root"));
    }
    for (; i < lines.size(); ++i) {
      if (const auto rw = rest("dir rw")) {
        paths->directories.push_back({std::string(*rw), true});
      } else if (const auto r_only = rest("dir r")) {
        paths->directories.push_back({std::string(*r_only), false});
      } else if (const auto set = rest("set"); set && set->find(' ') != std::string_view::npos) {
        const auto space = set->find(' ');
        paths->settings.emplace_back(std::string(set->substr(0, space)), std::string(set->substr(space + 1)));
      } else if (const auto warning = rest("warn")) {
        paths->warnings.emplace_back(*warning);
      } else {
        break;
      }
    }
  }
  if (i != lines.size()) {
    return fail(malformed(what, i + 1, "expected \"dir\", \"set\" or \"warn\" lines"));
  }
  if (!is_lower_hex(r.manifest_sha256, 64) || serialize(r) != text) {
    return fail(malformed(what, lines.size(), "not in canonical form (truncated or edited?)"));
  }
  return r;
}

Result<std::optional<StartRecord>>
read_start_record(const std::filesystem::path& version_dir)
{
  const auto path = version_dir / k_version_start_file;
  PW_ASSIGN(const auto text, read_optional(path));
  if (!text) {
    return std::optional<StartRecord>{};
  }
  PW_ASSIGN_CTX(auto record, in_quotes(path.string()), parse_start_record(*text));
  return std::optional<StartRecord>(std::move(record));
}

Result<std::optional<InstalledMarker>>
read_marker(const std::filesystem::path& root)
{
  const auto path = meta_dir(root) / k_marker_file;
  PW_ASSIGN(const auto text, read_optional(path));
  if (!text) {
    return std::optional<InstalledMarker>{};
  }
  PW_ASSIGN_CTX(auto marker, in_quotes(path.string()), parse_marker(*text));
  return std::optional<InstalledMarker>(std::move(marker));
}

Result<ChannelState>
read_state(const std::filesystem::path& root)
{
  const auto path = meta_dir(root) / k_state_file;
  PW_ASSIGN(const auto text, read_optional(path));
  if (!text) {
    return ChannelState{};
  }
  PW_ASSIGN_CTX(auto state, fmt::format("{} (the rollback guard; remove it only on purpose)", in_quotes(path.string())),
                parse_state(*text));
  return state;
}

Status
write_marker(const std::filesystem::path& root, const InstalledMarker& marker)
{
  return write_file_atomic(meta_dir(root) / k_marker_file, serialize(marker));
}

Status
write_state(const std::filesystem::path& root, const ChannelState& state)
{
  return write_file_atomic(meta_dir(root) / k_state_file, serialize(state));
}

} // namespace prewarm::install
