// SPDX-License-Identifier: Apache-2.0
// Merging partial bundles (one per CI shard, `prewarm build --shard I/N`)
// into one bundle signed once.
//
// Every partial is verified as the runtime would verify it: signature over
// the exact manifest bytes first (with `trust`), then the manifest is parsed,
// then each payload's digest is checked before the archive is read. The
// partials must come from one build: the same build-manifest digest,
// channel, serial and producer (prewarm, libarchive and zstd versions), and
// no job may appear in two partials (overlapping shards).
//
// A slice id is the target identity (target + requirements), so when one
// target's jobs were split across shards, several partials hold a slice with
// the same id. Those are extracted (verified) into one staging directory and
// archived again by the same slice writer with the same entry time, so that
// N shards merged are byte-identical to the monolithic build with the same
// SOURCE_DATE_EPOCH. A file present in two of them with different bytes is
// taken from the copy whose first job comes first, which is what the
// monolithic build keeps when its jobs wrote different bytes under one
// cache key (PoCL does, across processes); such files are counted and
// reported, and only when the differing file was written by a job other
// than each copy's first can the merged bytes differ from a monolithic
// build's.
//
// The merged header: issued-at is the latest and expires the earliest of the
// partials'; entries get the time the partials' archives recorded (they
// agree when every shard had the same SOURCE_DATE_EPOCH).
//
// Errors (Errc::verify): the partial's own verification codes, and
//   E_MERGE_MISMATCH   partials from different builds (header field named)
//   E_MERGE_DUPLICATE  a job present in two partials
//   E_MERGE_CONFLICT   same slice id with different requirements
//   E_EXPIRED          a partial has already expired
// and (Errc::usage) E_EXPIRES_SOON: the merged bundle would expire within a day.
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/trust.hpp"
#include "pack/bundle_expiry.hpp"
#include "pack/bundle_writer.hpp"
#include "pack/key_pair.hpp"

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace prewarm::pack {

struct MergeResult
{
  WrittenBundle bundle;
  std::size_t partial_count = 0;
  std::size_t job_count = 0;
  // Slices whose jobs came from more than one partial (re-packed together).
  std::vector<std::string> joined_slice_ids;
  // Files two partials held with different bytes (the first job's kept).
  std::size_t differing_files = 0;
};

// Verifies `partials` with `trust` at time `now`, merges them and writes
// `out_dir` signed with every key in `keys` (bundle_writer.hpp semantics:
// atomic, never a partial bundle under `out_dir`). A merged bundle that would
// expire within a day of `now` is refused as `prewarm build` refuses it
// (pack/bundle_expiry.hpp), or written with a warning under
// ExpiryPolicy::warn.
Result<MergeResult> merge_bundles(std::span<const std::filesystem::path> partials,
                                  const bundle::TrustStore& trust,
                                  std::span<const PrivateKey> keys,
                                  const std::filesystem::path& out_dir,
                                  SysSeconds now,
                                  ExpiryPolicy expiry = ExpiryPolicy::refuse);

} // namespace prewarm::pack
