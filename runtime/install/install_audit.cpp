// SPDX-License-Identifier: Apache-2.0
#include "install/install_audit.hpp"

#include "audit/layer_audit_log.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/time_format.hpp"
#include "bundle/custom_cache.hpp"
#include "install/install_layout.hpp"
#include "install/install_records.hpp"
#include "install/installed_version.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <system_error>

namespace prewarm::install {

namespace fs = std::filesystem;

Result<AuditBaseline>
read_audit_baseline(const fs::path& root)
{
  PW_ASSIGN(const auto version, open_installed_version(root));
  if (!version) {
    return fail(Errc::failed, fmt::format("nothing is installed under {}", in_quotes(root.string())),
                "E_NOT_INSTALLED");
  }
  return read_audit_baseline(root, version->marker, version->dir);
}

Result<AuditBaseline>
read_audit_baseline(const fs::path& root, const InstalledMarker& marker, const fs::path& version_dir)
{
  AuditBaseline baseline;
  std::error_code ec;
  baseline.root = fs::absolute(root, ec);
  if (ec) {
    baseline.root = root;
  }
  baseline.installed_at = format_rfc3339(marker.installed_at);
  for (const auto& kind : marker.kinds) {
    baseline.kind_dirs[kind.kind] = version_dir / kind.kind;
  }
  const auto list_path = marker.version.empty() ? meta_dir(root) / k_file_inventory_file
                                                : version_dir / k_version_files_file;
  if (fs::exists(list_path, ec)) {
    PW_ASSIGN_CTX(const auto text, fmt::format("file list {}", in_quotes(list_path.string())),
                  read_file(list_path.string()));
    PW_ASSIGN_CTX(baseline.files, fmt::format("file list {}", in_quotes(list_path.string())),
                  audit::parse_inventory(text));
    baseline.from_install = true;
  } else {
    for (const auto& [kind, dir] : baseline.kind_dirs) {
      PW_ASSIGN(baseline.files[kind], audit::list_files(dir));
    }
  }
  return baseline;
}

void
follow_directories(AuditBaseline& baseline, const std::map<std::string, fs::path>& used)
{
  const std::string custom_prefix = fmt::format("{}/", bundle::k_custom_kind);
  for (const auto& [relative, dir] : used) {
    if (dir == baseline.root / relative) {
      continue;
    }
    if (const auto it = baseline.kind_dirs.find(relative); it != baseline.kind_dirs.end()) {
      // The installed version's own directory is no private copy.
      if (it->second != dir) {
        it->second = dir;
        baseline.followed[relative] = dir;
      }
      continue;
    }
    if (!relative.starts_with(custom_prefix)) {
      continue;
    }
    // One custom cache of ROOT/custom: its own kind, with its files moved
    // out of the "custom" list ("NAME/x" -> "x").
    const auto name = relative.substr(custom_prefix.size());
    baseline.kind_dirs[relative] = dir;
    if (const auto all = baseline.kind_dirs.find(std::string(bundle::k_custom_kind));
        all == baseline.kind_dirs.end() || all->second / name != dir) {
      baseline.followed[relative] = dir;
    }
    auto& mine = baseline.files[relative];
    if (const auto all = baseline.files.find(bundle::k_custom_kind); all != baseline.files.end()) {
      const auto prefix = name + "/";
      for (auto file = all->second.begin(); file != all->second.end();) {
        if (file->starts_with(prefix)) {
          mine.insert(file->substr(prefix.size()));
          file = all->second.erase(file);
        } else {
          ++file;
        }
      }
    }
  }
}

Status
take_run_start(AuditBaseline& baseline)
{
  for (const auto& [kind, dir] : baseline.kind_dirs) {
    PW_ASSIGN(baseline.at_start[kind], audit::list_files(dir));
    PW_ASSIGN(baseline.states_at_start[kind], audit::snapshot_files(dir, k_hashed_at_run_start));
  }
  return {};
}

Result<InstallAudit>
audit_install(const AuditBaseline& baseline, const audit::AccessRecord* access, const fs::path& layer_log)
{
  InstallAudit result;
  result.root = baseline.root;
  result.from_install = baseline.from_install;
  result.installed_at = baseline.installed_at;
  result.watched = access != nullptr;
  result.usage.complete = access == nullptr || access->complete;
  static const audit::FileSet none;
  // A custom cache followed as a kind of its own (follow_directories) is
  // counted there only, not again among "custom"'s files.
  const std::string custom_prefix = fmt::format("{}/", bundle::k_custom_kind);
  const auto without_split_caches = [&](audit::FileSet files) {
    for (const auto& [other, _] : baseline.kind_dirs) {
      if (other.starts_with(custom_prefix)) {
        const auto prefix = other.substr(custom_prefix.size()) + "/";
        std::erase_if(files, [&](const std::string& f) { return f.starts_with(prefix); });
      }
    }
    return files;
  };
  for (const auto& [kind, dir] : baseline.kind_dirs) {
    PW_ASSIGN(auto now, audit::list_files(dir));
    auto start = baseline.at_start.find(kind);
    std::optional<audit::FileSet> start_files;
    if (start != baseline.at_start.end()) {
      start_files = start->second;
    }
    const auto before = baseline.files.find(kind);
    if (kind == bundle::k_custom_kind) {
      now = without_split_caches(std::move(now));
      if (start_files) {
        start_files = without_split_caches(std::move(*start_files));
      }
      if (now.empty() && (before == baseline.files.end() || before->second.empty()) && (!start_files || start_files->empty())) {
        continue; // every custom cache is followed on its own
      }
    }
    const audit::KindAccess* kind_access = nullptr;
    if (access != nullptr) {
      if (const auto it = access->kinds.find(kind); it != access->kinds.end()) {
        kind_access = &it->second;
      }
    }
    const auto states = baseline.states_at_start.find(kind);
    const audit::FileStates* kind_states = states == baseline.states_at_start.end() ? nullptr : &states->second;
    result.usage.kinds.push_back(audit::measure_kind(
      kind, dir, before == baseline.files.end() ? none : before->second, now, kind_access, kind_states));
    if (start_files) {
      if (!result.run) {
        result.run.emplace();
        result.run->complete = result.usage.complete;
      }
      result.run->kinds.push_back(audit::measure_kind(kind, dir, *start_files, now, kind_access, kind_states));
    }
  }
  result.followed = baseline.followed;
  if (!layer_log.empty()) {
    PW_ASSIGN(const auto log, audit::read_layer_audit_log(layer_log));
    audit::add_layer_events(result.usage, log);
  }
  return result;
}

nlohmann::json
to_json(const InstallAudit& audit)
{
  auto out = audit::to_json(audit.usage);
  out["root"] = audit.root.string();
  out["baseline"] = audit.from_install ? "install" : "start";
  out["installed_at"] = audit.installed_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(audit.installed_at);
  out["watched"] = audit.watched;
  if (audit.run) {
    out["this_run"] = audit::to_json(*audit.run);
  }
  if (!audit.followed.empty()) {
    nlohmann::json followed = nlohmann::json::object();
    for (const auto& [kind, dir] : audit.followed) {
      followed[kind] = dir.string();
    }
    out["followed"] = followed;
  }
  return out;
}

std::string
summary_line(const InstallAudit& audit)
{
  std::string followed;
  for (const auto& [kind, dir] : audit.followed) {
    followed += fmt::format("{}{}", followed.empty() ? "" : ", ", kind);
  }
  return fmt::format("audit: {} {}{}{}{}", audit.usage.summary(),
                     audit.from_install ? "since install" : "during this run (no install file list)",
                     audit.run && audit.from_install ? fmt::format("; this run: {}", audit.run->summary()) : "",
                     followed.empty() ? "" : fmt::format(" (watched this user's private copies of {})", followed),
                     audit.watched ? "" : " (reuse not measured: run the application under exec --audit)");
}

} // namespace prewarm::install
