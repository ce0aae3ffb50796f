// SPDX-License-Identifier: Apache-2.0
// The second half of a slice's extraction (slice_reader.hpp): the libarchive
// tar reader over the blocks the structure audit passed (audited_stream.hpp),
// the entry policy against the signed manifest, and the threads that write
// and hash each file. Internal to prewarm_bundle.
#pragma once

#include "base/error.hpp"
#include "bundle/audited_stream.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/slice_reader.hpp"

#include <cstddef>
#include <vector>

namespace prewarm::bundle {

inline constexpr std::size_t k_max_audited_blocks = 32;

// Extracts the entries of `slice` read from `sink` beneath `staging`.
// `created[i]` says whether slice.files[i] was made empty beforehand
// (prepared_entries.hpp).
Status extract_entries(const Slice& slice, int staging, const ExtractLimits& limits,
                       const std::vector<char>& created, BlockSink& sink);

} // namespace prewarm::bundle
