// SPDX-License-Identifier: Apache-2.0
// The structure audit of a slice payload's decompressed tar stream, on bytes
// alone (no file, no libarchive): every 512-byte header's type flag,
// checksum and ustar magic, the pax records, and that nothing but zeros
// follows the end-of-archive marker. It sees what a tar reader hides:
// global pax headers ('g', silently skipped by libarchive 3.6.2), GNU long
// name/link headers, concatenated archives, trailing data. The extraction
// (slice_reader.cpp) feeds it the decompressed stream block by block and lets
// the tar reader see only blocks the audit has finished with, so the entry
// policy does not depend on how one tar parser resolves odd headers.
//
// Errors are Errc::verify: E_PAYLOAD_FORMAT, E_TYPE, E_PATH, E_LIMIT.
#pragma once

#include "base/error.hpp"

#include <cstdint>
#include <span>
#include <string_view>

namespace prewarm::bundle {

// The decompressed stream, in blocks of any size, in order.
class TarBlockSource
{
public:
  virtual ~TarBlockSource() = default;
  // The next block; an empty span at the end of the stream. Called only once
  // every byte of the block before has been audited.
  virtual Result<std::span<const char>> next_block() = 0;
};

struct TarAuditLimits
{
  std::uint64_t max_stream_bytes = 0; // the whole decompressed stream
  std::uint64_t max_entries = 0;      // files + directories + links
  std::uint64_t max_file_bytes = 0;   // one entry's data
};

// Audits the stream to its end. `slice_id` names the slice in messages.
Status audit_tar_stream(TarBlockSource& source, std::string_view slice_id, const TarAuditLimits& limits);

// The same over a stream held in memory (tests, the fuzz target).
Status audit_tar_bytes(std::string_view stream, std::string_view slice_id, const TarAuditLimits& limits);

} // namespace prewarm::bundle
