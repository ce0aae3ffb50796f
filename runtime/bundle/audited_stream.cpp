// SPDX-License-Identifier: Apache-2.0
#include "bundle/audited_stream.hpp"

#include "base/encoding.hpp"
#include "bundle/reader_errors.hpp"
#include "bundle/tar_audit.hpp"

#include <archive_entry.h>
#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <span>

namespace prewarm::bundle {

namespace {

std::atomic<std::uint64_t> g_archive_reader_opens{0};

constexpr std::size_t k_read_buffer = 256 * 1024;

Result<ArchivePtr>
open_reader(int fd, const Slice& slice, bool raw)
{
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    return io_error(fmt::format("slice {}: cannot rewind the payload: {}", in_quotes(slice.id), errno_message(errno)));
  }
  ArchivePtr a(archive_read_new(), &archive_read_free);
  if (!a) {
    return fail(Errc::internal, "archive_read_new failed");
  }
  const int format = raw ? archive_read_support_format_raw(a.get()) : archive_read_support_format_tar(a.get());
  if (format != ARCHIVE_OK || archive_read_support_filter_zstd(a.get()) != ARCHIVE_OK) {
    return fail(Errc::internal, "libarchive lacks tar or zstd support: " + archive_message(a.get()));
  }
  note_archive_reader_open();
  if (archive_read_open_fd(a.get(), fd, k_read_buffer) != ARCHIVE_OK) {
    return verify_error("E_PAYLOAD_FORMAT", fmt::format("slice {}: payload is not a zstd tar: {}", in_quotes(slice.id), archive_message(a.get())));
  }
  return a;
}

// The audit's input: the payload decompressed by libarchive ("raw" format,
// zstd only). Each block goes on to the extraction through `sink` when the
// audit asks for the next one, that is, once it has audited every byte of it.
class AuditedPayload : public TarBlockSource
{
public:
  AuditedPayload(archive* a, BlockSink* sink) : m_archive(a), m_sink(sink) {}

  Result<std::span<const char>> next_block() override
  {
    if (m_sink != nullptr && !m_block.empty() && !m_sink->push(m_block.data(), m_block.size())) {
      m_sink = nullptr;
    }
    m_block = {};
    for (;;) {
      const void* block = nullptr;
      std::size_t size = 0;
      la_int64_t offset = 0;
      const int r = archive_read_data_block(m_archive, &block, &size, &offset);
      if (r == ARCHIVE_EOF) {
        return m_block;
      }
      if (r != ARCHIVE_OK) {
        return fail(Errc::verify, "cannot decompress: " + archive_message(m_archive), "E_PAYLOAD_FORMAT");
      }
      if (size > 0) {
        m_block = std::span<const char>(static_cast<const char*>(block), size);
        return m_block;
      }
    }
  }

private:
  archive* m_archive;
  BlockSink* m_sink;
  std::span<const char> m_block;
};

} // namespace

std::string
archive_message(archive* a)
{
  const char* text = archive_error_string(a);
  return text != nullptr ? text : "no detail from libarchive";
}

// tar + zstd only: no other format or filter is compiled into the reader, so

void
note_archive_reader_open()
{
  g_archive_reader_opens.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t
archive_reader_open_count()
{
  return g_archive_reader_opens.load(std::memory_order_relaxed);
}

Status
audit_structure(int fd, const Slice& slice, const ExtractLimits& limits, BlockSink* sink)
{
  PW_ASSIGN(auto a, open_reader(fd, slice, /*raw=*/true));
  archive_entry* entry = nullptr;
  if (archive_read_next_header(a.get(), &entry) != ARCHIVE_OK) {
    return verify_error("E_PAYLOAD_FORMAT", fmt::format("slice {}: payload is not zstd: {}", in_quotes(slice.id), archive_message(a.get())));
  }
  if (archive_filter_code(a.get(), 0) != ARCHIVE_FILTER_ZSTD) {
    return verify_error("E_PAYLOAD_FORMAT", fmt::format("slice {}: payload is not zstd-compressed (found {})", in_quotes(slice.id), archive_filter_name(a.get(), 0)));
  }
  // Headers + padding + one small pax header per entry, end marker, record padding.
  const std::uint64_t cap = slice.uncompressed_size + (slice.entry_count + 4) * 4096 + (std::uint64_t{1} << 20);
  AuditedPayload source(a.get(), sink);
  return audit_tar_stream(source, slice.id, TarAuditLimits{cap, limits.max_entries, limits.max_file_bytes});
}

} // namespace prewarm::bundle
