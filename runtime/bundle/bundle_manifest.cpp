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

// Custom caches and runtime environment of one slice: names, order, limits,
// one variable per purpose, a dir line for each cache and a cache line for
// each custom path.
Status
validate_caches_and_environment(const Slice& slice)
{
  const auto where = [&](std::string_view what) { return fmt::format("slice {}: {}", in_quotes(slice.id), what); };
  if (slice.caches.size() > k_max_caches_per_slice) {
    return format_error(where(fmt::format("{} custom caches (at most {})", slice.caches.size(), k_max_caches_per_slice)));
  }
  if (slice.environment.size() > k_max_environment_per_slice) {
    return format_error(where(fmt::format("{} env lines (at most {})", slice.environment.size(), k_max_environment_per_slice)));
  }
  std::set<std::string_view> variables;
  std::set<std::string_view> declared;
  for (std::size_t i = 0; i < slice.caches.size(); ++i) {
    const auto& cache = slice.caches[i];
    PW_TRY_CTX(where("cache"), check_custom_cache(cache));
    if (i > 0 && !(slice.caches[i - 1].name < cache.name)) {
      return format_error(where(fmt::format("cache {} is duplicated or out of order", in_quotes(cache.name))));
    }
    if (!variables.insert(cache.variable).second) {
      return format_error(where(fmt::format("cache {}: variable {} locates another cache too", in_quotes(cache.name), cache.variable)));
    }
    if (!std::binary_search(slice.directories.begin(), slice.directories.end(),
                            fmt::format("{}/{}", k_custom_kind, cache.name))) {
      return format_error(where(fmt::format("cache {} has no dir line {}/{}", in_quotes(cache.name), k_custom_kind, cache.name)));
    }
    declared.insert(cache.name);
  }
  for (std::size_t i = 0; i < slice.environment.size(); ++i) {
    const auto& setting = slice.environment[i];
    PW_TRY_CTX(where("env"), check_exported_variable(setting.name));
    if (!is_variable_value(setting.value)) {
      return format_error(where(fmt::format("env {}: value {} is not 1..1024 printable ASCII without outer or double spaces", setting.name, in_quotes(setting.value))));
    }
    if (i > 0 && !(slice.environment[i - 1].name < setting.name)) {
      return format_error(where(fmt::format("env {} is duplicated or out of order", setting.name)));
    }
    if (variables.contains(setting.name)) {
      return format_error(where(fmt::format("env {} is also the variable of a custom cache", setting.name)));
    }
  }
  const auto check_declared = [&](std::string_view path) -> Status {
    const auto name = custom_cache_of(path);
    if (!name.empty() && !declared.contains(name)) {
      return format_error(where(fmt::format("{} is under the custom cache {}, which has no cache line", in_quotes(path), in_quotes(name))));
    }
    return {};
  };
  for (const auto& dir : slice.directories) {
    PW_TRY(check_declared(dir));
  }
  for (const auto& file : slice.files) {
    PW_TRY(check_declared(file.path));
  }
  for (const auto& link : slice.links) {
    PW_TRY(check_declared(link.path));
  }
  return {};
}

// Link lines: each a new name beside the dirs and files, in a listed
// directory, and leading to a file of this slice inside its own tree. The
// installer then creates it as it is and never follows it.
Status
validate_links(const Slice& slice, std::set<std::string, std::less<>>& folded, const std::set<std::string_view>& directories)
{
  const auto where = [&](std::string_view what) { return fmt::format("slice {}: {}", in_quotes(slice.id), what); };
  const auto is_file = [&](std::string_view path) {
    const auto it = std::lower_bound(slice.files.begin(), slice.files.end(), path,
                                     [](const FileEntry& f, std::string_view p) { return f.path < p; });
    return it != slice.files.end() && it->path == path;
  };
  for (std::size_t i = 0; i < slice.links.size(); ++i) {
    const auto& link = slice.links[i];
    PW_TRY_CTX(where("link"), validate_entry_path(link.path, KindOnlyPath::refused));
    if (i > 0 && !(slice.links[i - 1].path < link.path)) {
      return format_error(where(fmt::format("link {} is duplicated or out of order", in_quotes(link.path))));
    }
    if (!folded.insert(ascii_lower(link.path)).second) {
      return format_error(where(fmt::format("link {} collides with another entry after ASCII case-fold", in_quotes(link.path))));
    }
    if (!directories.contains(parent_of(link.path))) {
      return format_error(where(fmt::format("link {} has no dir line for its parent {}", in_quotes(link.path), in_quotes(parent_of(link.path)))));
    }
    PW_ASSIGN_CTX(const auto resolved, where("link"), resolve_link_target(link.path, link.target));
    if (!is_file(resolved)) {
      return fail(Errc::verify, where(fmt::format("link {} -> {}: {} is not a file line of this slice (a link leads to a file "
                                                  "of its own cache: never to a directory, another link or nothing)",
                                                  in_quotes(link.path), in_quotes(link.target), in_quotes(resolved))), "E_PATH");
    }
  }
  return {};
}

// An absolute directory of normal components (APATH).
Status
validate_site_packages(std::string_view path)
{
  const auto refuse = [&](std::string_view why) {
    return format_error(fmt::format("site-packages {}: {}", in_quotes(path.substr(0, 80)), why));
  };
  if (path.size() < 2 || path.size() > 1024 || path.front() != '/' || path.back() == '/') {
    return refuse("not an absolute directory of 2..1024 bytes without a trailing \"/\"");
  }
  for (std::size_t start = 1; start <= path.size();) {
    const auto end = std::min(path.find('/', start), path.size());
    const auto component = path.substr(start, end - start);
    if (component.empty() || component == "." || component == ".." ||
        std::any_of(component.begin(), component.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      return refuse("an empty, \".\" or \"..\" component, or a control character");
    }
    start = end + 1;
  }
  return {};
}

Status
validate_slice(const Slice& slice)
{
  const auto where = [&](std::string_view what) { return fmt::format("slice {}: {}", in_quotes(slice.id), what); };
  if (!is_id(slice.id)) {
    return format_error(fmt::format("slice id {}: not of the form [a-z0-9][a-z0-9._-]{{0,127}}", in_quotes(slice.id)));
  }
  if (!is_sha256(slice.payload_sha256)) {
    return format_error(where(fmt::format("payload digest {} is not 64 lowercase hex digits", in_quotes(slice.payload_sha256))));
  }
  if (slice.requirements.size() > k_max_requirements_per_slice) {
    return format_error(where(fmt::format("{} requirements (at most {})", slice.requirements.size(), k_max_requirements_per_slice)));
  }
  for (std::size_t i = 0; i < slice.requirements.size(); ++i) {
    const auto& r = slice.requirements[i];
    if (!is_text(r.value)) {
      return format_error(where(fmt::format("requirement {}: value {} is not 1..1024 printable ASCII without outer or double spaces", r.key, in_quotes(r.value))));
    }
    if (auto s = validate_requirement(r); !s) {
      return fail(s.error().wrap(fmt::format("slice {}", in_quotes(slice.id))));
    }
    if (i > 0 && !(slice.requirements[i - 1] < r)) {
      return format_error(where(fmt::format("requirement \"{} {} {}\" is duplicated or out of order", r.key, r.op, r.value)));
    }
  }
  if (slice.site_packages.size() > k_max_site_packages_per_slice) {
    return format_error(where(fmt::format("{} site-packages lines (at most {})", slice.site_packages.size(),
                                          k_max_site_packages_per_slice)));
  }
  for (std::size_t i = 0; i < slice.site_packages.size(); ++i) {
    if (auto s = validate_site_packages(slice.site_packages[i]); !s) {
      return fail(s.error().wrap(fmt::format("slice {}", in_quotes(slice.id))));
    }
    if (i > 0 && !(slice.site_packages[i - 1] < slice.site_packages[i])) {
      return format_error(where(fmt::format("site-packages {} is duplicated or out of order",
                                            in_quotes(slice.site_packages[i]))));
    }
  }
  if (slice.jobs.size() > k_max_jobs_per_slice) {
    return format_error(where(fmt::format("{} jobs (at most {})", slice.jobs.size(), k_max_jobs_per_slice)));
  }
  for (std::size_t i = 0; i < slice.jobs.size(); ++i) {
    if (!is_text(slice.jobs[i])) {
      return format_error(where(fmt::format("job {} is not 1..1024 printable ASCII without outer or double spaces", in_quotes(slice.jobs[i]))));
    }
    if (i > 0 && !(slice.jobs[i - 1] < slice.jobs[i])) {
      return format_error(where(fmt::format("job {} is duplicated or out of order", in_quotes(slice.jobs[i]))));
    }
  }
  PW_TRY(validate_caches_and_environment(slice));
  const std::size_t entries = slice.directories.size() + slice.files.size() + slice.links.size();
  if (entries > k_max_entries_per_slice) {
    return format_error(where(fmt::format("{} entries (at most {})", entries, k_max_entries_per_slice)));
  }
  if (entries == 0) {
    return format_error(where("no entries"));
  }
  if (slice.entry_count != entries) {
    return format_error(where(fmt::format("entry count {} differs from the {} dir, file and link lines", slice.entry_count, entries)));
  }

  // Every path once, also after ASCII case-fold: on a case-insensitive file
  // system "A" and "a" are the same file (node-tar CVE-2021-37701 class).
  std::set<std::string, std::less<>> folded;
  std::set<std::string_view> directories;
  for (std::size_t i = 0; i < slice.directories.size(); ++i) {
    const auto& dir = slice.directories[i];
    PW_TRY_CTX(where("dir"), validate_entry_path(dir, KindOnlyPath::allowed));
    if (i > 0 && !(slice.directories[i - 1] < dir)) {
      return format_error(where(fmt::format("dir {} is duplicated or out of order", in_quotes(dir))));
    }
    if (!folded.insert(ascii_lower(dir)).second) {
      return format_error(where(fmt::format("dir {} collides with another entry after ASCII case-fold", in_quotes(dir))));
    }
    const auto parent = parent_of(dir);
    if (!parent.empty() && !directories.contains(parent)) {
      return format_error(where(fmt::format("dir {} has no dir line for its parent {}", in_quotes(dir), in_quotes(parent))));
    }
    directories.insert(dir);
  }
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < slice.files.size(); ++i) {
    const auto& file = slice.files[i];
    PW_TRY_CTX(where("file"), validate_entry_path(file.path, KindOnlyPath::refused));
    if (i > 0 && !(slice.files[i - 1].path < file.path)) {
      return format_error(where(fmt::format("file {} is duplicated or out of order", in_quotes(file.path))));
    }
    if (!is_sha256(file.sha256)) {
      return format_error(where(fmt::format("file {}: digest {} is not 64 lowercase hex digits", in_quotes(file.path), in_quotes(file.sha256))));
    }
    if (file.mode != 0644 && file.mode != 0755) {
      return format_error(where(fmt::format("file {}: mode {:04o} (only 0644 and 0755)", in_quotes(file.path), file.mode)));
    }
    if (!folded.insert(ascii_lower(file.path)).second) {
      return format_error(where(fmt::format("file {} collides with another entry after ASCII case-fold", in_quotes(file.path))));
    }
    if (!directories.contains(parent_of(file.path))) {
      return format_error(where(fmt::format("file {} has no dir line for its parent {}", in_quotes(file.path), in_quotes(parent_of(file.path)))));
    }
    if (file.size > std::numeric_limits<std::uint64_t>::max() - total) {
      return format_error(where("file sizes overflow 64 bits"));
    }
    total += file.size;
  }
  if (total != slice.uncompressed_size) {
    return format_error(where(fmt::format("uncompressed size {} differs from the sum of file sizes {}", slice.uncompressed_size, total)));
  }
  return validate_links(slice, folded, directories);
}

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
      line(fmt::format("cache {} {}", cache.name, cache.variable));
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

Status
validate(const BundleManifest& manifest)
{
  if (!is_name(manifest.channel)) {
    return format_error(fmt::format("channel {}: not of the form [A-Za-z0-9][A-Za-z0-9._/-]{{0,127}}", in_quotes(manifest.channel)));
  }
  if (manifest.expires <= manifest.issued_at) {
    return format_error(fmt::format("expires {} is not after issued-at {}", format_rfc3339(manifest.expires), format_rfc3339(manifest.issued_at)));
  }
  if (!is_text(manifest.producer)) {
    return format_error(fmt::format("producer {}: not 1..1024 printable ASCII without outer or double spaces", in_quotes(manifest.producer)));
  }
  if (!is_sha256(manifest.build_manifest_sha256)) {
    return format_error(fmt::format("build-manifest {}: not 64 lowercase hex digits", in_quotes(manifest.build_manifest_sha256)));
  }
  if (manifest.slices.empty()) {
    return format_error("no slices");
  }
  if (manifest.slices.size() > k_max_slices) {
    return format_error(fmt::format("{} slices (at most {})", manifest.slices.size(), k_max_slices));
  }
  for (std::size_t i = 0; i < manifest.slices.size(); ++i) {
    if (i > 0 && !(manifest.slices[i - 1].id < manifest.slices[i].id)) {
      return format_error(fmt::format("slice {} is duplicated or out of order", in_quotes(manifest.slices[i].id)));
    }
    PW_TRY(validate_slice(manifest.slices[i]));
  }
  return {};
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

// "cache NAME VARIABLE"
Status
parse_cache(std::size_t line_no, std::string_view rest, Slice& slice)
{
  const auto fields = two_fields(rest);
  if (!fields) {
    return line_error(line_no, "cache line needs: NAME VARIABLE");
  }
  if (slice.caches.size() >= k_max_caches_per_slice) {
    return line_error(line_no, fmt::format("more than {} custom caches", k_max_caches_per_slice));
  }
  CustomCache cache{std::string(fields->first), std::string(fields->second)};
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
