// SPDX-License-Identifier: Apache-2.0
#include "install/start_record.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/cache_kind.hpp"
#include "install/application_environment.hpp"
#include "install/install_layout.hpp"
#include "install/installer.hpp"
#include "install/user_access.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::install {

namespace fs = std::filesystem;

namespace {

// The environment of one --paths choice, when every cache directory it names
// is used in place (what recorded_environment() can check per user).
std::optional<StartPaths>
start_paths(const fs::path& root, const fs::path& version_dir, ExportedPaths paths)
{
  auto env = application_environment(root, {}, VersionHold::none, paths);
  if (!env || !env->notes.empty() || env->version_dir != version_dir || env->merges_caller_values) {
    return std::nullopt; // merges_caller_values: worked out at every exec, in the application's environment
  }
  StartPaths out;
  for (const auto& [relative, dir] : env->directories) {
    if (dir != version_dir / relative && dir != root / relative) {
      return std::nullopt; // a private copy: the installer's own, not the application's
    }
    out.directories.push_back({relative, kind_is_written(relative.substr(0, relative.find('/')))});
  }
  for (const auto& s : env->settings) {
    out.settings.emplace_back(s.name, s.value);
  }
  out.warnings = env->warnings;
  return out;
}

} // namespace

std::string
policy_digest(const bundle::ManifestPolicy& policy)
{
  std::string text;
  for (const auto& [channel, rule] : policy.channels) {
    text += fmt::format("channel {} {} {}\n", channel, rule.min_serial ? std::to_string(*rule.min_serial) : "-",
                        rule.expect_manifest_sha256.value_or("-"));
  }
  const auto& l = policy.limits;
  text += fmt::format("limits {} {} {} {} {} {} {}\n", l.max_payload_bytes, l.max_uncompressed_bytes, l.max_entries,
                      l.max_file_bytes, l.max_path_length, l.max_depth, l.max_expansion_ratio);
  if (policy.allowed_kinds) {
    text += "kinds";
    for (const auto& kind : *policy.allowed_kinds) {
      text += " " + kind;
    }
    text += "\n";
  }
  for (const auto& name : policy.allowed_environment) {
    text += fmt::format("environment {}\n", name);
  }
  return sha256_hex(text);
}

bool
start_recorded(const fs::path& version_dir, const std::string& manifest_sha256, const bundle::ManifestPolicy& policy)
{
  const auto record = read_start_record(version_dir);
  return record && *record && (*record)->runtime == start_record_runtime() &&
         (*record)->manifest_sha256 == manifest_sha256 && (*record)->policy == policy_digest(policy);
}

Status
write_start_record(const fs::path& root_in, const VerifiedBundle& verified, const bundle::ManifestPolicy& policy)
{
  std::error_code ec;
  const auto root = fs::absolute(root_in, ec).lexically_normal();
  PW_ASSIGN(const auto marker, read_marker(root));
  if (!marker || marker->version.empty() || marker->manifest_sha256 != verified.manifest_sha256) {
    return fail(Errc::failed, fmt::format("{} does not hold this bundle as a version", in_quotes(root.string())));
  }
  const auto version_dir = versions_dir(root) / marker->version;
  StartRecord r;
  r.runtime = std::string(start_record_runtime());
  r.manifest_sha256 = verified.manifest_sha256;
  r.policy = policy_digest(policy);
  r.issued_at = verified.manifest.issued_at;
  r.expires = verified.manifest.expires;
  const auto search = framework_search(verified.manifest);
  r.frameworks_wanted = search.wanted;
  for (const auto& dir : search.site_packages) {
    r.site_packages.push_back(dir.string());
  }
  for (const auto& slice : verified.manifest.slices) {
    if (std::ranges::find(marker->slice_ids, slice.id) != marker->slice_ids.end()) {
      auto refused = refused_variables(slice, policy.allowed_environment);
      r.refused.insert(r.refused.end(), refused.begin(), refused.end());
    }
  }
  r.root = root.string();
  // prewarm's OpenCL layer is found where exec runs, beside its binary or by
  // PREWARM_OPENCL_LAYER, and OPENCL_LAYERS extends the caller's: worked out
  // at every exec (opencl_layer_environment.hpp).
  const bool layer = std::ranges::any_of(marker->kinds,
                                         [](const auto& k) { return k.kind == bundle::opencl_layer_kind().name; });
  auto version_paths = layer ? std::nullopt : start_paths(root, version_dir, ExportedPaths::version);
  auto root_paths = layer ? std::nullopt : start_paths(root, version_dir, ExportedPaths::root_links);
  r.environment_recorded = version_paths && root_paths;
  if (r.environment_recorded) {
    r.version_paths = std::move(*version_paths);
    r.root_paths = std::move(*root_paths);
  }
  auto text = serialize(r);
  if (!text) {
    r.environment_recorded = false;
    r.version_paths = {};
    r.root_paths = {};
    text = serialize(r);
  }
  if (!text) {
    return fail(Errc::failed, "the start record cannot carry this install's texts");
  }
  return write_file_atomic(version_dir / k_version_start_file, *text);
}

} // namespace prewarm::install
