// SPDX-License-Identifier: Apache-2.0
// Two reads of one payload fd, the second only if the first passed:
//   1. size + SHA-256 against the signed manifest (no parser involved:
//      payload_verification.cpp);
//   2. one decompression feeding two checks in a pipeline:
//   2a. structure audit (tar_audit.cpp): the zstd-decompressed tar stream
//      (libarchive "raw" format) walked block by block;
//   2b. extraction through the libarchive tar reader with the per-entry
//       policy, reading only blocks the audit has finished with.
// The audit keeps the entry policy independent of how one tar parser resolves
// odd headers (parser differentials); an audit failure wins over any
// extraction error, as when the audit was a separate pass before extraction.
#include "bundle/slice_reader.hpp"

#include "base/encoding.hpp"
#include "base/log.hpp"
#include "bundle/audited_stream.hpp"
#include "bundle/entry_extraction.hpp"
#include "bundle/payload_verification.hpp"
#include "bundle/prepared_entries.hpp"
#include "bundle/reader_errors.hpp"

#include <fmt/format.h>

#include <system_error>
#include <thread>

namespace prewarm::bundle {

namespace {

// Below this many bytes a slice cannot be a meaningful decompression bomb;
// tiny slices of zero-filled files legitimately compress beyond any ratio.
constexpr std::uint64_t k_expansion_check_floor = std::uint64_t{64} << 20;

Status
check_declared_limits(const Slice& slice, const ExtractLimits& limits)
{
  const auto over = [&](std::string_view what, std::uint64_t value, std::uint64_t limit) {
    return verify_error("E_LIMIT", fmt::format("slice {}: {} {} is over the limit of {}", in_quotes(slice.id), what, value, limit));
  };
  if (slice.payload_size > limits.max_payload_bytes) {
    return over("payload size", slice.payload_size, limits.max_payload_bytes);
  }
  if (slice.uncompressed_size > limits.max_uncompressed_bytes) {
    return over("uncompressed size", slice.uncompressed_size, limits.max_uncompressed_bytes);
  }
  if (slice.entry_count > limits.max_entries) {
    return over("entry count", slice.entry_count, limits.max_entries);
  }
  if (slice.uncompressed_size > k_expansion_check_floor && slice.payload_size > 0 &&
      slice.uncompressed_size / slice.payload_size > limits.max_expansion_ratio) {
    return over("expansion ratio", slice.uncompressed_size / slice.payload_size, limits.max_expansion_ratio);
  }
  for (const auto& file : slice.files) {
    if (file.size > limits.max_file_bytes) {
      return over(fmt::format("file {} size", in_quotes(file.path)), file.size, limits.max_file_bytes);
    }
    PW_TRY_CTX(fmt::format("slice {}", in_quotes(slice.id)),
               validate_entry_path(file.path, KindOnlyPath::refused, limits.max_path_length, limits.max_depth));
  }
  for (const auto& dir : slice.directories) {
    PW_TRY_CTX(fmt::format("slice {}", in_quotes(slice.id)),
               validate_entry_path(dir, KindOnlyPath::allowed, limits.max_path_length, limits.max_depth));
  }
  for (const auto& link : slice.links) {
    PW_TRY_CTX(fmt::format("slice {}", in_quotes(slice.id)),
               validate_entry_path(link.path, KindOnlyPath::refused, limits.max_path_length, limits.max_depth));
  }
  return {};
}

// A thread running `work`, or, where none can be created (EAGAIN under a
// pids limit), `work` done here and an empty (not joinable) thread.
template<typename Work>
std::thread
start_thread_or_run_here(Work&& work)
{
  try {
    return std::thread(work);
  } catch (const std::system_error& e) {
    log::verbose("cannot start a thread ({}); doing the work on the calling thread", e.what());
    work();
    return {};
  }
}

} // namespace

Status
extract_slice(int payload_fd, const Slice& slice, int staging_dirfd, const ExtractLimits& limits)
{
  PW_TRY(check_declared_limits(slice, limits));
  PreparedEntries prepared;
  // Where no thread can be created (a pids limit), each step runs on this
  // thread instead: slower, never a failure of its own.
  auto prepare = start_thread_or_run_here([&] { prepare_entries(staging_dirfd, slice, prepared); });
  auto verified = verify_payload_identity(payload_fd, slice);
  if (prepare.joinable()) {
    prepare.join();
  }
  if (!verified) {
    unprepare_entries(staging_dirfd, slice, prepared);
    return fail(std::move(verified).error());
  }
  const auto identity = *verified;
  // Only now may a parser see the bytes: the audit thread decompresses and
  // audits, this thread extracts what the audit has passed.
  BlockSink sink(k_max_audited_blocks);
  Status audited;
  const auto run_audit = [&] {
    audited = audit_structure(payload_fd, slice, limits, &sink);
    sink.close(audited.has_value());
  };
  std::thread audit;
  try {
    audit = std::thread(run_audit);
  } catch (const std::system_error& e) {
    // Without an audit thread the whole audited stream is queued before the
    // extraction reads it (memory up to the declared size, which the limits
    // already bound).
    log::verbose("cannot start the audit thread ({}); auditing the whole stream first", e.what());
    sink.unbound();
    run_audit();
  }
  Status extracted = extract_entries(slice, staging_dirfd, limits, prepared.files, sink);
  sink.abandon(); // the audit goes on alone to the end of the stream
  if (audit.joinable()) {
    audit.join();
  }
  if (!audited || !extracted) {
    unprepare_entries(staging_dirfd, slice, prepared);
  }
  PW_TRY(audited);
  PW_TRY(extracted);
  // The bytes parsed were the bytes hashed only if nobody wrote the file
  // meanwhile (same fd, so a rename over the path changes nothing).
  return check_payload_unchanged(payload_fd, slice, identity, "while it was extracted");
}

} // namespace prewarm::bundle
