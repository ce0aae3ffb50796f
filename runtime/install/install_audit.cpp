// SPDX-License-Identifier: Apache-2.0
#include "install/install_audit.hpp"

#include "audit/layer_audit_log.hpp"
#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/time_format.hpp"
#include "bundle/custom_cache.hpp"
#include "install/install_layout.hpp"
#include "install/install_records.hpp"
#include "install/installed_version.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <system_error>

namespace prewarm::install {

namespace fs = std::filesystem;

namespace {

// Each custom cache is its own kind, "custom/NAME" at ROOT/custom/NAME, as
// the build's hit proof counts it. Audited as one "custom" kind, the files of
// one cache moved to its own kind when followed were left out of the "custom"
// list but not out of its directory, and every one of them counted as new.
void
split_custom_caches(AuditBaseline& baseline)
{
  const std::string custom{bundle::k_custom_kind};
  const auto dir = baseline.kind_dirs.find(custom);
  if (dir == baseline.kind_dirs.end()) {
    return;
  }
  const fs::path custom_dir = dir->second;
  baseline.kind_dirs.erase(dir);
  auto files = std::move(baseline.files[custom]);
  baseline.files.erase(custom);
  auto states = std::move(baseline.install_states[custom]);
  baseline.install_states.erase(custom);
  // A cache that holds no file still has its directory. A link there is
  // reported as a link (never followed) and is no cache of the bundle; an
  // unreadable directory leaves the caches the file list names below.
  const auto listed = for_each_entry(custom_dir, [&](const TreeEntry& entry) -> Result<WalkNext> {
    if (entry.is_directory()) {
      const auto kind = custom + "/" + std::string(entry.name);
      baseline.kind_dirs[kind] = custom_dir / entry.name;
      baseline.files[kind];
    }
    return WalkNext::skip;
  });
  static_cast<void>(listed);
  for (const auto& file : files) {
    const auto slash = file.find('/');
    // The layout has nothing directly under custom/ (custom_cache.hpp).
    if (slash == std::string::npos) {
      continue;
    }
    const auto kind = custom + "/" + file.substr(0, slash);
    baseline.kind_dirs.try_emplace(kind, custom_dir / file.substr(0, slash));
    baseline.files[kind].insert(file.substr(slash + 1));
    if (const auto state = states.find(file); state != states.end()) {
      baseline.install_states[kind].insert_or_assign(file.substr(slash + 1), state->second);
    }
  }
}

} // namespace

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
                  audit::parse_inventory(text, &baseline.install_states));
    baseline.from_install = true;
  } else {
    for (const auto& [kind, dir] : baseline.kind_dirs) {
      PW_ASSIGN(baseline.files[kind], audit::list_files(dir));
    }
  }
  split_custom_caches(baseline);
  return baseline;
}

void
follow_directories(AuditBaseline& baseline, const std::map<std::string, fs::path>& used)
{
  for (const auto& [relative, dir] : used) {
    const auto it = baseline.kind_dirs.find(relative);
    if (it == baseline.kind_dirs.end()) {
      continue;
    }
    // The installed directory itself, by the version's path or through
    // ROOT/<kind> (--paths root), is no private copy.
    std::error_code ec;
    if (dir == it->second || dir == baseline.root / relative || fs::equivalent(dir, it->second, ec)) {
      continue;
    }
    it->second = dir;
    baseline.followed[relative] = dir;
    // A private copy is not the installed tree: its mtimes are the copy's
    // and its Triton group files name the copy, so the install's states
    // would count them as rewritten. Audited as before states existed.
    baseline.install_states.erase(relative);
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
  for (const auto& [kind, dir] : baseline.kind_dirs) {
    PW_ASSIGN(const auto now, audit::list_files(dir));
    const auto before = baseline.files.find(kind);
    const audit::KindAccess* kind_access = nullptr;
    if (access != nullptr) {
      if (const auto it = access->kinds.find(kind); it != access->kinds.end()) {
        kind_access = &it->second;
      }
    }
    const auto states = baseline.states_at_start.find(kind);
    const audit::FileStates* kind_states = states == baseline.states_at_start.end() ? nullptr : &states->second;
    // Since install: against the install's states where the list has them
    // (a rewrite by any earlier run shows), else against this run's start.
    const auto installed = baseline.install_states.find(kind);
    const bool has_install_states = installed != baseline.install_states.end();
    result.usage.kinds.push_back(audit::measure_kind(kind, dir, before == baseline.files.end() ? none : before->second,
                                                     now, kind_access,
                                                     has_install_states ? &installed->second : kind_states,
                                                     has_install_states));
    if (const auto start = baseline.at_start.find(kind); start != baseline.at_start.end()) {
      if (!result.run) {
        result.run.emplace();
        result.run->complete = result.usage.complete;
      }
      result.run->kinds.push_back(audit::measure_kind(kind, dir, start->second, now, kind_access, kind_states));
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
