// SPDX-License-Identifier: Apache-2.0
// The audit of an install root: per installed kind, what the application
// reused and what it compiled anew, in the names of runtime/audit.
//
// Baseline: the install's file list (ROOT/.prewarm/files), so "new" means
// compiled anew since install; an install made before file lists existed
// falls back to the files present when the audit began (`baseline`
// "start"). Reuse is known only for a watched run (`exec --audit`); `status
// --audit` reports new files only. A list that records each file's state
// at install (size, mtime, digest) also makes a file rewritten since install
// with other bytes count as new ("N rewritten"): size and mtime decide
// first, and only a file whose mtime moved is hashed. Events of the OpenCL layer
// (PREWARM_LAYER_AUDIT_LOG, audit/layer_audit_log.hpp) join as kind
// "programs" when that file exists.
//
// The directories watched are the ones the application really uses: a user
// that got a private copy of a kind (user_access.hpp) is audited on that
// copy (follow_directories), not on the installed root it never opened.
// A run's own counts ("this_run") compare with the states taken when it
// began (take_run_start: size, mtime, and the digest of files up to 1 MiB,
// where caches keep the metadata they rewrite in place), so a file written
// with the same bytes is no change.
//
// JSON (exec --audit FILE, status --audit):
//   {"root": DIR, "baseline": "install"|"start", "installed_at": TIME|null,
//    "watched": bool, "complete": bool, "summary": LINE,
//    "kinds": [ ...audit/cache_usage.hpp... ],          since install
//    "this_run": {"complete", "kinds", "summary"}        (exec only)
//    "followed": {KIND: DIR}                            private copies watched
//    "application": {"exit_status": N | "signal": N}   (exec only)}
#pragma once

#include "audit/access_watch.hpp"
#include "audit/cache_usage.hpp"
#include "audit/file_inventory.hpp"
#include "base/error.hpp"
#include "install/install_records.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::install {

struct AuditBaseline
{
  std::filesystem::path root;
  std::map<std::string, std::filesystem::path> kind_dirs; // kind -> VERSION/<kind>
  audit::Inventory files;
  // Each file's state at install (format 2 lists); empty for older lists
  // and for a baseline listed now. With them, a file rewritten with other
  // bytes since install counts as new ("rewritten").
  audit::InventoryStates install_states;
  bool from_install = false; // the install's list; false: listed now
  std::string installed_at;  // from the marker ("" when unknown)
  std::map<std::string, std::filesystem::path> followed; // kind -> private copy watched instead
  // take_run_start(): what each kind directory held when the run began.
  std::map<std::string, audit::FileSet> at_start;
  std::map<std::string, audit::FileStates> states_at_start;
};

// Files up to this size are hashed when a run begins (metadata rewritten in
// place is small; compiled binaries are compared by size and mtime).
inline constexpr std::uint64_t k_hashed_at_run_start = std::uint64_t{1} << 20;

// Points the baseline at the directories the application uses
// (ApplicationEnvironment::directories): a kind, or a custom cache (always
// its own kind "custom/NAME"), whose directory is not the installed one is
// watched there (a private copy), against its share of the install's list.
void follow_directories(AuditBaseline& baseline, const std::map<std::string, std::filesystem::path>& used);

// Lists and snapshots every kind directory now, before the run.
Status take_run_start(AuditBaseline& baseline);

// The installed kinds of ROOT and the files they held at install (or now).
// Nothing installed is Errc::failed E_NOT_INSTALLED, as environment() says.
Result<AuditBaseline> read_audit_baseline(const std::filesystem::path& root);
// The same for a version already resolved (exec: the one the application was
// given, whatever the marker names now).
Result<AuditBaseline> read_audit_baseline(const std::filesystem::path& root,
                                          const InstalledMarker& marker,
                                          const std::filesystem::path& version_dir);

struct InstallAudit
{
  audit::UsageReport usage;               // since install
  std::optional<audit::UsageReport> run;  // this run (take_run_start() was called)
  std::map<std::string, std::filesystem::path> followed;
  bool from_install = false;
  bool watched = false;
  std::string installed_at;
  std::filesystem::path root;
};

// Compares ROOT/<kind> now with the baseline; `access` is the watched run's
// record (null: not watched); `layer_log` the OpenCL layer's audit file.
Result<InstallAudit> audit_install(const AuditBaseline& baseline,
                                   const audit::AccessRecord* access,
                                   const std::filesystem::path& layer_log);

nlohmann::json to_json(const InstallAudit& audit);

// "audit: pocl: 96 reused, 0 new since install" (one line for stderr).
std::string summary_line(const InstallAudit& audit);

} // namespace prewarm::install
