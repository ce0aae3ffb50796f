// SPDX-License-Identifier: Apache-2.0
// Why a hit proof's re-run missed (hit_proof.hpp): each miss with its
// evidence or "cause unknown", never guessed:
//   - kernels of the same names under new keys: the first differing field
//     of their metadata or line of a text file of the two entries;
//   - a build-time path or the host name inside a text file of the cache
//     (inside a compiled binary it is no evidence: compilers embed
//     temporary names);
//   - files written at the capture's own paths: a cache that names its files
//     by the absolute path they had at the capture.
#pragma once

#include "audit/cache_usage.hpp"
#include "bundle/cache_kind.hpp"
#include "command/custom_capture.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::command {

// Files the re-run wrote at the capture's own paths (the capture was out of
// reach meanwhile, command_job.cpp): a cache that names its files by the
// absolute path they had at the capture. `kind`: the kind whose directory
// they lie in ("inductor", "custom/NAME"), or "home" (the private home).
struct WrittenIntoCapture
{
  std::string kind;
  std::vector<std::string> files; // absolute paths
};

// Why a kind's re-run wrote at the capture's path, with the fix.
std::string written_into_capture_cause(const WrittenIntoCapture& written);

// The name of the variable that points `kind`'s cache (its first setting), for
// messages; "its variable" when it has none.
std::string cache_variable(bundle::CacheKind kind);

// Kind -> kernel name -> the captured entries that hold it (a tuned kernel
// is compiled in several configurations, each its own entry).
using CapturedKernels = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

// The causes of the misses in `usage` (separate for tests), each with its
// evidence or said to be unknown, never guessed: kernels that came back under
// new keys with what differs between a captured entry and the new one
// (entry_difference; of several captured entries of that name, one whose
// metadata agrees where there is one: the same configuration compiled
// otherwise, not another one), a capture path or the host name inside a text file of
// a kind that missed (a path inside a compiled binary is no evidence:
// compilers embed temporary file names), else "cause unknown". An untouched
// kind gets a note; a known case of a cache (located by `custom_caches`)
// whose keys cannot survive the move is named beside its evidence.
std::vector<std::string> diagnose_misses(const audit::UsageReport& usage,
                                         const CapturedKernels& captured_kernels,
                                         const std::vector<std::string>& capture_paths,
                                         const std::vector<CustomCacheRequest>& custom_caches = {});

// What differs between two entries of one kind under `kind_dir`: the first
// text file present in both whose bytes differ, as "FILE: FIELD was X, is Y"
// (JSON metadata such as Triton's <kernel>.json; its "hash" is skipped) or
// "FILE line N: was X, is Y"; bookkeeping files (cache_entries.hpp) are not
// compared. nullopt: no text file differs.
std::optional<std::string> entry_difference(std::string_view kind,
                                            const std::filesystem::path& kind_dir,
                                            const std::string& old_entry,
                                            const std::string& new_entry);

} // namespace prewarm::command
