// SPDX-License-Identifier: Apache-2.0
// validate() of bundle_manifest.hpp: the rules a manifest's slices obey
// beyond its grammar (names, order, limits, custom caches and environment,
// links, site-packages), apart from the text's reader and writer.
#include "bundle/bundle_manifest.hpp"

#include "base/encoding.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/manifest_text.hpp"
#include "bundle/requirement.hpp"
#include "bundle/runtime_variable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <string>

namespace prewarm::bundle {

using namespace manifest_text;

namespace {

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

// Dir lines: each a new name whose parent is a dir line before it (a bare
// kind has none). `directories` receives them for the files and links.
Status
validate_directories(const Slice& slice, std::set<std::string, std::less<>>& folded,
                     std::set<std::string_view>& directories)
{
  const auto where = [&](std::string_view what) { return fmt::format("slice {}: {}", in_quotes(slice.id), what); };
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
  return {};
}

// File lines: each a new name in a listed directory, with a digest and a
// plain mode; their sizes add up to the slice's uncompressed size.
Status
validate_files(const Slice& slice, std::set<std::string, std::less<>>& folded,
               const std::set<std::string_view>& directories)
{
  const auto where = [&](std::string_view what) { return fmt::format("slice {}: {}", in_quotes(slice.id), what); };
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
  PW_TRY(validate_directories(slice, folded, directories));
  PW_TRY(validate_files(slice, folded, directories));
  return validate_links(slice, folded, directories);
}

} // namespace

Status
manifest_text::validate_site_packages(std::string_view path)
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

} // namespace prewarm::bundle
