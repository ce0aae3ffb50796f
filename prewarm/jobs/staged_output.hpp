// SPDX-License-Identifier: Apache-2.0
// A job's staged output: the directory tree an executor fills (one
// directory per cache kind, `STAGING/<kind>/...`, the bundle writer's layout)
// and hands to `prewarm build` as a JobOutput. What is done to it lives in
// prewarm/jobs, below the executors, so the built-in, command and AOT
// executors and the build share it without one reaching into another:
//   create  (create_staged_kinds)  a directory per kind before the job runs;
//   clean   (staged_kind.hpp)      drop driver bookkeeping and what a slice
//                                  must not carry;
//   count   (count_staged_files)   regular files and bytes;
//   prune   (prune_empty_kinds)    kind directories the job left empty;
//   merge   (merge_staged_tree)    a job's output into its slice's tree;
//   copy    (copy_for_proof)       what a hit proof re-runs against.
// Every walk is base/directory_tree's for_each_entry(): a symbolic link is
// seen as a link and never followed.
#pragma once

#include "base/directory_tree.hpp"
#include "base/error.hpp"
#include "bundle/cache_kind.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

namespace prewarm::jobs {

using bundle::CacheKind;

// Whether create_staged_kinds() accepts a kind directory that exists: a
// capture wants fresh ones (an existing one would mix an earlier run in), a
// built-in job reuses its work directory's.
enum class ExistingKindDirectory { refuse, keep };

// Creates `staging` and `staging`/<kind> for each kind.
Status create_staged_kinds(const std::filesystem::path& staging, std::span<const CacheKind> kinds,
                           ExistingKindDirectory existing);

// Regular files under `root` and their total size; links, and what they
// point at, are not counted. `root` must be a directory.
Result<TreeCounts> count_staged_files(const std::filesystem::path& root);

// Removes every top-level entry of `staging` that holds no regular file (a
// kind directory the job left empty, or anything that is not a directory),
// so the slice holds only what the job wrote. Returns the regular files
// kept.
Result<std::uint64_t> prune_empty_kinds(const std::filesystem::path& staging);

// Copies the regular files and directories of `from` into `to`. A file that
// already exists is kept: caches name entries by a key over what they hold,
// and two jobs that compiled the same program may still write different
// bytes (PoCL 3.1's program.bc and binaries differ between processes), so
// the first one wins (jobs merge in id order: the result does not depend on
// which job finished first). A link or special file is an error (a slice
// carries files and directories only). Returns how many files differed from
// the copy kept, for the report. `job_id` names the job in messages.
Result<std::size_t> merge_staged_tree(const std::filesystem::path& from, const std::filesystem::path& to,
                                      std::string_view job_id);

// The hit proof's copy of a staged tree, the one every executor's proof
// reads (command/proof_rerun.hpp make_proof_copy, on this host and on a
// virtual device): `from` copied into `to` as the slice carries it,
// links kept as links (a slice keeps a link that stays inside its cache), so
// the re-run reads what is packaged and the staged files stay untouched.
// `to` is created when missing; files already there are replaced.
Status copy_for_proof(const std::filesystem::path& from, const std::filesystem::path& to);

} // namespace prewarm::jobs
