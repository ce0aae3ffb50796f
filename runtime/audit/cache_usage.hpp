// SPDX-License-Identifier: Apache-2.0
// Reused vs written anew, per cache kind, from what a kind directory held
// before a run (file_inventory.hpp), what it holds after, and, where the run
// was watched, which files were opened (access_watch.hpp).
//
//   new       files that were not there before, plus files that were there
//             and are no longer the same file: unlinked and created again
//             (another inode) or truncated and rewritten (another mtime),
//             even with the same bytes: a rebuilt entry is never a hit.
//             Opening a file for writing is not a change: an application may
//             open O_RDWR and only read (OpenCV). With the states taken before
//             the run (file_inventory.hpp FileState) every file is compared by
//             size, mtime and inode (and digest, where taken at a run's start);
//             without them every written file counts as new.
//   reused    files that were there before, were read, and are still the same
//             file: measured, never assumed; unknown (nullopt) when not watched
//   unused    files that were there before and were not opened (watched runs)
// A kind whose files were neither read nor changed by a watched run is
// "untouched": the application did not use that cache at all, which says
// nothing about whether it would hit, so it is never a miss.
//   traced    (kind dynamo) AOTAutograd entries looked up or written: graphs
//             Dynamo traced in the run instead of loading a precompiled frame
//             (cache_kind.hpp traced_graph_entries); a lower bound where
//             the run was not watched. A kind hits when nothing of it is new
//             and (dynamo) Dynamo traced nothing.
// Bookkeeping (cache_entries.hpp) counts as none of these. Entries (programs,
// kernels, graphs) are named as cache_entries.hpp describes; an entry is
// "new" when any of its files is new (a PoCL program that gained a kernel
// for a new local size is both reused and new).
//
// JSON (exec --audit, status --audit, the builder's hit proof):
//   {"complete": bool, "kinds": [{"kind", "files_before", "reused_files"
//    (number or null), "new_files", "unused_files" (number or null),
//    "rewritten_files" (of new_files: there before, content changed),
//    "hit": bool, "untouched": bool, "traced_graphs" (kind dynamo only),
//    "reused_entries": [label...], "new_entries": [label...],
//    "layer_hits", "layer_misses" (kind "programs" with a layer log)}]}
#pragma once

#include "audit/access_watch.hpp"
#include "audit/file_inventory.hpp"
#include "audit/layer_audit_log.hpp"
#include "base/error.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::audit {

struct NamedEntry
{
  std::string entry;                // key within the kind (cache_entries.hpp)
  std::string label;                // readable name
  std::set<std::string> kernels;    // kernel names where the format has them
};

struct KindUsage
{
  std::string kind;
  std::filesystem::path dir;
  std::uint64_t files_before = 0;
  std::optional<std::uint64_t> reused_files; // nullopt: not measured
  std::uint64_t new_files = 0;
  std::uint64_t rewritten_files = 0; // of new_files: there before, content changed
  std::optional<std::uint64_t> unused_files;
  std::optional<std::uint64_t> traced_graphs; // kind dynamo: graphs Dynamo traced in the run
  std::vector<NamedEntry> reused_entries;
  std::vector<NamedEntry> new_entries;
  std::vector<std::string> new_file_paths; // relative, for diagnosis
  // Kind "programs" with a layer audit log: what the layer served and built.
  std::optional<std::uint64_t> layer_hits;
  std::optional<std::uint64_t> layer_misses;

  // Nothing compiled anew and (dynamo) nothing traced; an untouched kind included.
  bool hit() const;
  // A file new since the baseline, or a program the OpenCL layer missed.
  bool compiled_anew() const;
  // Watched, files were there, and none was read or changed, no layer event.
  bool untouched() const;
  // "pocl: 96 reused, 0 new" (+ " (program ab12 [k1, k2], ...)" when new;
  // + ", Dynamo traced 1 graph" where it did).
  std::string summary() const;
};

struct UsageReport
{
  std::vector<KindUsage> kinds;
  bool complete = true;
  std::size_t malformed_layer_lines = 0;

  const KindUsage* find(std::string_view kind) const;
  // "pocl: 96 reused, 0 new; triton: 3 reused, 1 new (kernel add_kernel)"
  std::string summary() const;
};

// One kind's usage. `access` is null when the run was not watched;
// `before_states` null when no states were taken before it (then a file
// written during the run counts as new).
KindUsage measure_kind(std::string kind,
                       const std::filesystem::path& dir,
                       const FileSet& before,
                       const FileSet& after,
                       const KindAccess* access,
                       const FileStates* before_states = nullptr,
                       bool states_settled = false); // file_changed()'s `settled`

// Adds the layer's program events to kind "programs" (created if absent).
void add_layer_events(UsageReport& report, const LayerAuditLog& log);

nlohmann::json to_json(const KindUsage& usage);
nlohmann::json to_json(const UsageReport& report);

} // namespace prewarm::audit
