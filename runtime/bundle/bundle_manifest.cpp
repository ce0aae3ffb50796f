// SPDX-License-Identifier: Apache-2.0
#include "bundle/bundle_manifest.hpp"

#include "base/encoding.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/manifest_text.hpp"
#include "bundle/requirement.hpp"
#include "bundle/runtime_variable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <set>
#include <string>

namespace prewarm::bundle {

using namespace manifest_text;

namespace {

constexpr std::string_view k_magic_line = "prewarm-bundle 1";

} // namespace

std::string
serialize(const BundleManifest& manifest)
{
  std::string out;
  out.reserve(4096);
  const auto line = [&out](std::string_view text) {
    out.append(text);
    out.push_back('\n');
  };
  line(k_magic_line);
  line(fmt::format("channel {}", manifest.channel));
  line(fmt::format("serial {}", manifest.serial));
  line(fmt::format("issued-at {}", format_rfc3339(manifest.issued_at)));
  line(fmt::format("expires {}", format_rfc3339(manifest.expires)));
  line(fmt::format("producer {}", manifest.producer));
  line(fmt::format("build-manifest {}", manifest.build_manifest_sha256));
  for (const auto& slice : manifest.slices) {
    line(fmt::format("slice {}", slice.id));
    line(fmt::format("payload {} {} {} {}", slice.payload_sha256, slice.payload_size, slice.uncompressed_size, slice.entry_count));
    for (const auto& r : slice.requirements) {
      line(fmt::format("require {} {} {}", r.key, r.op, r.value));
    }
    for (const auto& path : slice.site_packages) {
      line(fmt::format("site-packages {}", encode_entry_path(path)));
    }
    for (const auto& job : slice.jobs) {
      line(fmt::format("job {}", job));
    }
    for (const auto& cache : slice.caches) {
      if (cache.flag) {
        line(fmt::format("cache {} {} {} {}", cache.name, cache.variable, separator_word(cache.flag->separator),
                         flag_template(*cache.flag)));
      } else {
        line(fmt::format("cache {} {}", cache.name, cache.variable));
      }
    }
    for (const auto& setting : slice.environment) {
      line(fmt::format("env {} {}", setting.name, setting.value));
    }
    for (const auto& dir : slice.directories) {
      line(fmt::format("dir {}", encode_entry_path(dir)));
    }
    for (const auto& file : slice.files) {
      line(fmt::format("file {} {} {:04o} {}", file.sha256, file.size, file.mode, encode_entry_path(file.path)));
    }
    for (const auto& link : slice.links) {
      line(fmt::format("link {} {}", encode_entry_path(link.path), encode_entry_path(link.target)));
    }
  }
  return out;
}

void
normalize(BundleManifest& manifest)
{
  std::sort(manifest.slices.begin(), manifest.slices.end(),
            [](const Slice& a, const Slice& b) { return a.id < b.id; });
  for (auto& slice : manifest.slices) {
    std::sort(slice.requirements.begin(), slice.requirements.end());
    std::sort(slice.site_packages.begin(), slice.site_packages.end());
    slice.site_packages.erase(std::unique(slice.site_packages.begin(), slice.site_packages.end()),
                              slice.site_packages.end());
    std::sort(slice.jobs.begin(), slice.jobs.end());
    slice.jobs.erase(std::unique(slice.jobs.begin(), slice.jobs.end()), slice.jobs.end());
    std::sort(slice.caches.begin(), slice.caches.end());
    std::sort(slice.environment.begin(), slice.environment.end());
    std::sort(slice.directories.begin(), slice.directories.end());
    std::sort(slice.files.begin(), slice.files.end(),
              [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
    std::sort(slice.links.begin(), slice.links.end());
    slice.entry_count = slice.directories.size() + slice.files.size() + slice.links.size();
  }
}


namespace {

// The magic line and the bundle-wide fields, in their fixed order.
Status
parse_header(Lines& lines, BundleManifest& manifest)
{
  if (lines.text[0] != k_magic_line) {
    return line_error(1, fmt::format("expected {}, found {}", in_quotes(k_magic_line), in_quotes(lines.text[0].substr(0, 40))));
  }
  lines.next = 1;
  const auto& n = lines.next; // after expect_key(): the number of the line just read
  PW_ASSIGN(const auto channel, lines.expect_key("channel"));
  manifest.channel = std::string(channel);
  PW_ASSIGN(const auto serial, lines.expect_key("serial"));
  const auto serial_value = parse_u64(serial);
  if (!serial_value) {
    return line_error(n, fmt::format("serial {} is not a decimal u64 without leading zeros", in_quotes(serial)));
  }
  manifest.serial = *serial_value;
  PW_ASSIGN(const auto issued, lines.expect_key("issued-at"));
  auto issued_at = parse_rfc3339(issued);
  if (!issued_at) {
    return line_error(n, "issued-at: " + issued_at.error().message());
  }
  manifest.issued_at = *issued_at;
  PW_ASSIGN(const auto expires_text, lines.expect_key("expires"));
  auto expires = parse_rfc3339(expires_text);
  if (!expires) {
    return line_error(n, "expires: " + expires.error().message());
  }
  manifest.expires = *expires;
  PW_ASSIGN(const auto producer, lines.expect_key("producer"));
  manifest.producer = std::string(producer);
  PW_ASSIGN(const auto build_manifest, lines.expect_key("build-manifest"));
  if (!is_sha256(build_manifest)) {
    return line_error(n, fmt::format("build-manifest {} is not 64 lowercase hex digits", in_quotes(build_manifest)));
  }
  manifest.build_manifest_sha256 = std::string(build_manifest);
  return {};
}

// A check of a section's own (requirement, custom cache, variable) as a
// manifest error at `line`.
Status
at_line(std::size_t line, Status checked)
{
  if (!checked) {
    return fail(Error(Errc::verify, fmt::format("manifest:{}: {}", line, checked.error().message()), checked.error().code()));
  }
  return {};
}

// "slice ID" and the "payload SHA256 SIZE UNCOMPRESSED-SIZE ENTRIES" line
// that must follow it.
Status
parse_slice_start(Lines& lines, std::string_view id, BundleManifest& manifest)
{
  const std::size_t line_no = lines.next + 1;
  if (manifest.slices.size() >= k_max_slices) {
    return line_error(line_no, fmt::format("more than {} slices", k_max_slices));
  }
  if (!is_id(id)) {
    return line_error(line_no, fmt::format("slice id {} is not of the form [a-z0-9][a-z0-9._-]{{0,127}}", in_quotes(id)));
  }
  Slice& slice = manifest.slices.emplace_back();
  slice.id = std::string(id);
  const std::size_t n = ++lines.next;
  if (n >= lines.text.size()) {
    return line_error(n + 1, "missing payload line (truncated?)");
  }
  const auto payload_line = lines.text[n];
  if (payload_line.substr(0, 8) != "payload ") {
    return line_error(n + 1, fmt::format("expected \"payload ...\" after the slice line, found {}", in_quotes(payload_line.substr(0, 40))));
  }
  const auto fields = split_fields(payload_line.substr(8), 5);
  if (fields.size() != 4) {
    return line_error(n + 1, "payload line needs: SHA256 SIZE UNCOMPRESSED-SIZE ENTRIES");
  }
  if (!is_sha256(fields[0])) {
    return line_error(n + 1, fmt::format("payload digest {} is not 64 lowercase hex digits", in_quotes(fields[0])));
  }
  const auto size = parse_u64(fields[1]);
  const auto uncompressed = parse_u64(fields[2]);
  const auto entries = parse_u64(fields[3]);
  if (!size || !uncompressed || !entries) {
    return line_error(n + 1, "payload sizes must be decimal u64 without leading zeros");
  }
  slice.payload_sha256 = std::string(fields[0]);
  slice.payload_size = *size;
  slice.uncompressed_size = *uncompressed;
  slice.entry_count = *entries;
  return {};
}

// "require KEY OP VALUE"
Status
parse_require(std::size_t line_no, std::string_view rest, Slice& slice)
{
  const auto fields = split_fields(rest, 3);
  if (fields.size() != 3) {
    return line_error(line_no, "require line needs: KEY OP VALUE");
  }
  Requirement r{std::string(fields[0]), std::string(fields[1]), std::string(fields[2])};
  PW_TRY(at_line(line_no, validate_requirement(r)));
  if (slice.requirements.size() >= k_max_requirements_per_slice) {
    return line_error(line_no, fmt::format("more than {} requirements", k_max_requirements_per_slice));
  }
  slice.requirements.push_back(std::move(r));
  return {};
}

Result<std::string> decoded_field(std::size_t line_no, std::string_view what, std::string_view field);

// "site-packages APATH"
Status
parse_site_packages(std::size_t line_no, std::string_view rest, Slice& slice)
{
  if (slice.site_packages.size() >= k_max_site_packages_per_slice) {
    return line_error(line_no, fmt::format("more than {} site-packages lines", k_max_site_packages_per_slice));
  }
  PW_ASSIGN(auto path, decoded_field(line_no, "site-packages", rest));
  if (auto s = validate_site_packages(path); !s) {
    return line_error(line_no, s.error().message());
  }
  slice.site_packages.push_back(std::move(path));
  return {};
}

// "job ID"
Status
parse_job(std::size_t line_no, std::string_view rest, Slice& slice)
{
  if (slice.jobs.size() >= k_max_jobs_per_slice) {
    return line_error(line_no, fmt::format("more than {} jobs", k_max_jobs_per_slice));
  }
  slice.jobs.emplace_back(rest);
  return {};
}

// "cache NAME VARIABLE" or "cache NAME VARIABLE SEP KEY={dir}"
Status
parse_cache(std::size_t line_no, std::string_view rest, Slice& slice)
{
  const auto fields = split_fields(rest, 5);
  if ((fields.size() != 2 && fields.size() != 4) || fields.back().find(' ') != std::string_view::npos) {
    return line_error(line_no, "cache line needs: NAME VARIABLE [comma|space KEY={dir}]");
  }
  if (slice.caches.size() >= k_max_caches_per_slice) {
    return line_error(line_no, fmt::format("more than {} custom caches", k_max_caches_per_slice));
  }
  CustomCache cache{std::string(fields[0]), std::string(fields[1]), std::nullopt};
  if (fields.size() == 4) {
    const auto separator = parse_separator_word(fields[2]);
    if (!separator) {
      return line_error(line_no, fmt::format("cache flag separator {} is not comma or space", in_quotes(fields[2])));
    }
    auto flag = parse_flag_template(fields[3], *separator);
    if (!flag) {
      return at_line(line_no, fail(flag.error()));
    }
    cache.flag = std::move(*flag);
  }
  PW_TRY(at_line(line_no, check_custom_cache(cache)));
  slice.caches.push_back(std::move(cache));
  return {};
}

// "env VARIABLE VALUE"
Status
parse_env(std::size_t line_no, std::string_view rest, Slice& slice)
{
  const auto fields = split_fields(rest, 2);
  if (fields.size() != 2) {
    return line_error(line_no, "env line needs: VARIABLE VALUE");
  }
  if (slice.environment.size() >= k_max_environment_per_slice) {
    return line_error(line_no, fmt::format("more than {} env lines", k_max_environment_per_slice));
  }
  PW_TRY(at_line(line_no, check_exported_variable(fields[0])));
  slice.environment.push_back(EnvSetting{std::string(fields[0]), std::string(fields[1])});
  return {};
}

// An encoded PATH or TARGET field, decoded.
Result<std::string>
decoded_field(std::size_t line_no, std::string_view what, std::string_view field)
{
  auto decoded = decode_entry_path(field);
  if (!decoded) {
    return line_error(line_no, fmt::format("{} {} is not percent-encoded as the grammar writes it (\"%\" and two uppercase "
                                           "hex digits for each byte outside [A-Za-z0-9._+-/], and only for those)",
                                           what, in_quotes(field.substr(0, 80))));
  }
  return std::move(*decoded);
}

// "dir PATH"
Status
parse_dir(std::size_t line_no, std::string_view rest, Slice& slice)
{
  PW_ASSIGN(auto path, decoded_field(line_no, "path", rest));
  if (auto s = validate_entry_path(path, KindOnlyPath::allowed); !s) {
    return line_error(line_no, s.error().message());
  }
  slice.directories.push_back(std::move(path));
  return {};
}

// "link PATH TARGET"
Status
parse_link(std::size_t line_no, std::string_view rest, Slice& slice)
{
  const auto fields = two_fields(rest);
  if (!fields) {
    return line_error(line_no, "link line needs: PATH TARGET");
  }
  PW_ASSIGN(auto path, decoded_field(line_no, "path", fields->first));
  PW_ASSIGN(auto target, decoded_field(line_no, "target", fields->second));
  if (auto s = validate_entry_path(path, KindOnlyPath::refused); !s) {
    return line_error(line_no, s.error().message());
  }
  if (auto resolved = resolve_link_target(path, target); !resolved) {
    return fail(Error(Errc::verify, fmt::format("manifest:{}: {}", line_no, resolved.error().message()), "E_PATH"));
  }
  slice.links.push_back(LinkEntry{std::move(path), std::move(target)});
  return {};
}

// "file SHA256 SIZE MODE PATH"
Status
parse_file(std::size_t line_no, std::string_view rest, Slice& slice)
{
  const auto fields = split_fields(rest, 4);
  if (fields.size() != 4) {
    return line_error(line_no, "file line needs: SHA256 SIZE MODE PATH");
  }
  if (!is_sha256(fields[0])) {
    return line_error(line_no, fmt::format("file digest {} is not 64 lowercase hex digits", in_quotes(fields[0])));
  }
  const auto size = parse_u64(fields[1]);
  if (!size) {
    return line_error(line_no, fmt::format("file size {} is not a decimal u64 without leading zeros", in_quotes(fields[1])));
  }
  unsigned mode = 0;
  if (fields[2] == "0644") {
    mode = 0644;
  } else if (fields[2] == "0755") {
    mode = 0755;
  } else {
    return line_error(line_no, fmt::format("file mode {} (only 0644 and 0755)", in_quotes(fields[2])));
  }
  PW_ASSIGN(auto path, decoded_field(line_no, "path", fields[3]));
  if (auto s = validate_entry_path(path, KindOnlyPath::refused); !s) {
    return line_error(line_no, s.error().message());
  }
  slice.files.push_back(FileEntry{std::move(path), std::string(fields[0]), *size, mode});
  return {};
}

// The sections of a slice after its payload line, in the only order they
// may appear; each may repeat.
struct SectionParser
{
  std::string_view keyword;
  Status (*parse)(std::size_t line_no, std::string_view rest, Slice& slice);
  bool is_entry; // dir and file lines count against k_max_entries_per_slice
};
constexpr std::array<SectionParser, 8> k_sections{{
  {"require", parse_require, false},
  {"site-packages", parse_site_packages, false},
  {"job", parse_job, false},
  {"cache", parse_cache, false},
  {"env", parse_env, false},
  {"dir", parse_dir, true},
  {"file", parse_file, true},
  {"link", parse_link, true},
}};

} // namespace

bool
may_hold_caches_or_environment(std::string_view bytes)
{
  // A section line starts with its keyword and a space (parse_slices), and is
  // never the first line (the magic line is).
  return bytes.find("\ncache ") != std::string_view::npos || bytes.find("\nenv ") != std::string_view::npos;
}

namespace {

// Every line after the header: slices and their sections.
Status
parse_slices(Lines& lines, BundleManifest& manifest)
{
  Slice* slice = nullptr;
  std::size_t section = 0; // index into k_sections of the earliest section allowed next
  for (; lines.next < lines.text.size(); ++lines.next) {
    const std::size_t line_no = lines.next + 1;
    const auto text = lines.text[lines.next];
    const auto space = text.find(' ');
    const auto keyword = text.substr(0, space);
    const auto rest = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    if (space == std::string_view::npos) {
      return line_error(line_no, fmt::format("unknown line {}", in_quotes(text.substr(0, 40))));
    }
    if (keyword == "slice") {
      PW_TRY(parse_slice_start(lines, rest, manifest));
      slice = &manifest.slices.back();
      section = 0;
      continue;
    }
    const auto found = std::find_if(k_sections.begin(), k_sections.end(),
                                    [&](const SectionParser& s) { return s.keyword == keyword; });
    if (found == k_sections.end()) {
      return line_error(line_no, fmt::format("unknown line {}", in_quotes(text.substr(0, 40))));
    }
    if (slice == nullptr) {
      return line_error(line_no, fmt::format("{} line before the first slice line", in_quotes(keyword)));
    }
    const auto index = static_cast<std::size_t>(found - k_sections.begin());
    if (index < section) {
      return line_error(line_no, fmt::format("{} line out of order (require, site-packages, job, cache, env, dir, file, link)", in_quotes(keyword)));
    }
    section = index;
    if (found->is_entry && slice->directories.size() + slice->files.size() + slice->links.size() >= k_max_entries_per_slice) {
      return line_error(line_no, fmt::format("more than {} entries in slice {}", k_max_entries_per_slice, in_quotes(slice->id)));
    }
    PW_TRY(found->parse(line_no, rest, *slice));
  }
  if (manifest.slices.empty()) {
    return line_error(lines.text.size() + 1, "no slice (truncated?)");
  }
  return {};
}

// One spelling only: anything the field parsers tolerated but serialize()
// would write differently (order, duplicates) is not canonical.
Status
check_canonical(const BundleManifest& manifest, std::string_view bytes)
{
  const std::string canonical = serialize(manifest);
  if (canonical != bytes) {
    std::size_t line = 1;
    const std::size_t limit = std::min(canonical.size(), bytes.size());
    for (std::size_t i = 0; i < limit && canonical[i] == bytes[i]; ++i) {
      if (bytes[i] == '\n') {
        ++line;
      }
    }
    return line_error(line, "not in canonical form (order, spacing or number spelling)");
  }
  return {};
}

} // namespace

Result<BundleManifest>
parse(std::string_view bytes)
{
  PW_TRY(check_bytes(bytes));
  Lines lines(bytes);
  BundleManifest manifest;
  PW_TRY(parse_header(lines, manifest));
  PW_TRY(parse_slices(lines, manifest));
  PW_TRY(validate(manifest));
  PW_TRY(check_canonical(manifest, bytes));
  return manifest;
}

} // namespace prewarm::bundle
