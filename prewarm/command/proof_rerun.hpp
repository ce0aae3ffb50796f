// SPDX-License-Identifier: Apache-2.0
// The hit proof's copy and re-run: one sequence for every executor that
// proves what it captured, on this host (hit_proof.hpp) and on a virtual
// Intel device (virtual_device/virtual_command.hpp, virtual_device_executor.hpp).
//   copy     each captured cache into the place the re-run finds it
//            (make_proof_copy: jobs::copy_for_proof keeps links as links and
//            leaves the staged files exactly what is packaged; Triton's group
//            files relocated onto the copy as the installer relocates them,
//            audit/triton_groups.hpp; with ProofFiles::read_only the files made
//            read-only but for the kind's bookkeeping, hit_proof.hpp says why);
//   before   each copy listed, every file hashed (audit/file_inventory.hpp);
//   re-run   the caller's: the same work, pointed at the copies, while
//            runtime/audit watches which files it opens (access_watch.hpp);
//   count    per cache, reused and new files and entries as runtime/audit
//            counts them for `status --audit` (cache_usage.hpp): a file the
//            re-run wrote is new only when its bytes changed.
// Where the work runs, how it is pointed at the copies and what a miss means
// stay the caller's.
#pragma once

#include "audit/cache_usage.hpp"
#include "audit/file_inventory.hpp"
#include "base/error.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::command {

// Whether the copied files are made read-only (but for the kind's bookkeeping).
enum class ProofFiles { as_copied, read_only };

struct ProofCache
{
  std::string kind;                // as runtime/audit names it: "pocl", "neo", "custom/<name>"
  std::filesystem::path captured;  // the staged tree; missing: the copy starts empty
  std::filesystem::path copy;      // where the re-run finds it (created)
  ProofFiles files = ProofFiles::as_copied;
};

// The copies as the re-run gets them.
struct ProofCopies
{
  std::map<std::string, std::filesystem::path> dirs; // kind -> copy
  std::map<std::string, audit::FileSet> before;      // kind -> its files before the re-run
};

// Makes `cache.copy` from `cache.captured` (see the file comment).
Status make_proof_copy(const ProofCache& cache);

using ProofRerun = std::function<Status(const ProofCopies& copies)>;

// Copies every cache, runs `rerun` against the copies while watching them,
// and counts what it reused and wrote anew; a cache that neither held nor
// gained a file is left out of the report. An error: a copy, the watch or
// `rerun` itself failed (a re-run that ran and failed is the caller's result).
// `before_watch` runs on the copies before their files are watched: what the
// builder itself reads of them (the captured kernels' names) must not count
// as the re-run reusing them.
Result<audit::UsageReport> rerun_on_copies(const std::vector<ProofCache>& caches, const ProofRerun& rerun,
                                           const std::function<void(const ProofCopies&)>& before_watch = {});

// The entries of `kind` the re-run wrote anew; 0 for a kind not in `usage`.
std::size_t new_entries(const audit::UsageReport& usage, std::string_view kind);
// Of every kind.
std::size_t new_entries(const audit::UsageReport& usage);
// "neo/<entry>": the first entry written anew, in kind order; nullopt: none.
std::optional<std::string> first_new_entry(const audit::UsageReport& usage);

} // namespace prewarm::command
