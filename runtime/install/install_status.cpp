// SPDX-License-Identifier: Apache-2.0
#include "install/install_status.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/requirement.hpp"
#include "install/install_layout.hpp"
#include "install/installed_version.hpp"
#include "install/tree_commit.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <set>

namespace prewarm::install {

namespace {

std::string
describe_requirements(const std::vector<bundle::Requirement>& requirements)
{
  if (requirements.empty()) {
    return "any host";
  }
  std::string out;
  for (const auto& r : requirements) {
    out += fmt::format("{}{} {} {}", out.empty() ? "" : ", ", r.key, r.op, r.value);
  }
  return out;
}

} // namespace

Result<InstallStatus>
read_install_status(const std::filesystem::path& root_in, std::span<const host::HostDevice> host_devices)
{
  std::error_code ec;
  InstallStatus status;
  status.root = std::filesystem::absolute(root_in, ec).lexically_normal();
  const auto& root = status.root;
  PW_ASSIGN(auto version, open_installed_version(root));
  if (version) {
    status.marker = version->marker;
  }
  PW_ASSIGN(status.state, read_state(root));
  struct stat st{};
  status.interrupted = ::lstat((meta_dir(root) / k_committing_file).c_str(), &st) == 0;
  if (status.interrupted) {
    status.warnings.push_back("an install was interrupted while swapping caches in: the caches may mix two bundles "
                              "and `env`/`exec` export none of them until the next install repairs it");
  }
  if (!status.marker) {
    return status;
  }

  // The manifest copy was verified when it was installed; here it only
  // describes (status decides nothing).
  std::optional<bundle::BundleManifest> manifest;
  if (auto bytes = read_file(version->manifest_path().string(), std::uint64_t{16} << 20)) {
    if (auto parsed = bundle::parse(*bytes)) {
      manifest = std::move(*parsed);
    } else {
      status.warnings.push_back("the installed manifest copy does not parse: " + parsed.error().message());
    }
  } else {
    status.warnings.push_back("the installed manifest copy is missing: " + bytes.error().message());
  }

  const auto properties = host::properties_of(host_devices);
  if (manifest) {
    const std::set<std::string> installed(status.marker->slice_ids.begin(), status.marker->slice_ids.end());
    for (const auto& slice : manifest->slices) {
      if (!installed.contains(slice.id)) {
        continue;
      }
      SliceStatus s{slice.id, slice.requirements, slice.jobs, {}, false, {}};
      std::set<std::string> kinds;
      for (const auto& dir : slice.directories) {
        kinds.insert(std::string(bundle::kind_of(dir)));
      }
      s.kinds.assign(kinds.begin(), kinds.end());
      const auto match = bundle::match_slice(slice, properties);
      s.matches_host = match.matched;
      if (!match.matched) {
        s.mismatch = match.reason;
        status.warnings.push_back(fmt::format(
          "slice {} ({}) was made for {}; this host differs ({}): its caches will likely be rebuilt by the driver",
          slice.id, fmt::join(s.kinds, ", "), describe_requirements(slice.requirements), match.reason));
      }
      status.slices.push_back(std::move(s));
    }
  }

  status.version_dir = version->dir;
  for (const auto& k : status.marker->kinds) {
    KindStatus ks{k.kind, k.files, k.bytes, 0, 0};
    if (version->dir_fd) {
      if (auto live = count_tree(version->dir_fd.get(), k.kind)) {
        ks.live_files = live->files;
        ks.live_bytes = live->bytes;
      }
    }
    if (ks.live_files < ks.files) {
      status.warnings.push_back(fmt::format("{}: {} of the {} installed files are gone (evicted or removed)", k.kind,
                                            ks.files - ks.live_files, ks.files));
    }
    status.kinds.push_back(std::move(ks));
  }
  return status;
}

std::string
to_text(const InstallStatus& status)
{
  std::string out = fmt::format("root: {}\n", status.root.string());
  if (status.interrupted) {
    out += "installed: INTERRUPTED install (the marker below may not describe the caches)\n";
  }
  if (!status.marker) {
    out += "installed: nothing\n";
  } else {
    const auto& m = *status.marker;
    out += fmt::format("installed: channel {} serial {} (manifest sha256 {}) at {}\n", m.channel, m.serial,
                       m.manifest_sha256, format_rfc3339(m.installed_at));
    out += fmt::format("version: {}\n", m.version.empty() ? "none (the layout of an earlier prewarm: caches at ROOT/<kind>)"
                                                          : status.version_dir.string());
    for (const auto& s : status.slices) {
      out += fmt::format("slice {}: made for {}; {}\n", s.id, describe_requirements(s.requirements),
                         s.matches_host ? "matches this host" : "DOES NOT match this host: " + s.mismatch);
      for (const auto& job : s.jobs) {
        out += fmt::format("  job {}\n", job);
      }
    }
    for (const auto& k : status.kinds) {
      out += fmt::format("kind {}: {} files, {} bytes installed; now {} files, {} bytes\n", k.kind, k.files, k.bytes,
                         k.live_files, k.live_bytes);
    }
  }
  for (const auto& w : status.warnings) {
    out += fmt::format("warning: {}\n", w);
  }
  return out;
}

nlohmann::json
to_json(const InstallStatus& status)
{
  nlohmann::json j;
  j["root"] = status.root.string();
  j["installed"] = status.marker.has_value();
  j["interrupted"] = status.interrupted;
  if (status.marker) {
    const auto& m = *status.marker;
    j["manifest_sha256"] = m.manifest_sha256;
    j["channel"] = m.channel;
    j["serial"] = m.serial;
    j["installed_at"] = format_rfc3339(m.installed_at);
    j["version"] = m.version;
    j["version_dir"] = status.version_dir.string();
  }
  auto slices = nlohmann::json::array();
  for (const auto& s : status.slices) {
    auto requirements = nlohmann::json::array();
    for (const auto& r : s.requirements) {
      requirements.push_back({{"key", r.key}, {"op", r.op}, {"value", r.value}});
    }
    slices.push_back({{"id", s.id},
                      {"requirements", requirements},
                      {"jobs", s.jobs},
                      {"kinds", s.kinds},
                      {"matches_host", s.matches_host},
                      {"mismatch", s.mismatch}});
  }
  j["slices"] = slices;
  auto kinds = nlohmann::json::array();
  for (const auto& k : status.kinds) {
    kinds.push_back({{"kind", k.kind},
                     {"files", k.files},
                     {"bytes", k.bytes},
                     {"live_files", k.live_files},
                     {"live_bytes", k.live_bytes}});
  }
  j["kinds"] = kinds;
  auto channels = nlohmann::json::object();
  for (const auto& [channel, mark] : status.state) {
    channels[channel] = {{"serial", mark.serial}, {"manifest_sha256", mark.manifest_sha256}};
  }
  j["high_water"] = channels;
  j["warnings"] = status.warnings;
  return j;
}

} // namespace prewarm::install
