// SPDX-License-Identifier: Apache-2.0
// The first half of a slice's extraction (slice_reader.hpp): the payload
// decompressed once (libarchive, zstd only) and audited block by block
// (tar_audit.hpp); each block the audit has finished with goes on through a
// BlockSink to the tar reader of entry_extraction.hpp. Internal to
// prewarm_bundle.
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/slice_reader.hpp"

#include <archive.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::bundle {

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_read_free)>;

// libarchive's message for its last error.
std::string archive_message(archive* a);

// Counts one payload handed to a libarchive reader (archive_reader_open_count()).
void note_archive_reader_open();

// Where the audit hands on the decompressed bytes it has finished checking
// (the extraction thread's tar reader). push() returns false once nobody
// reads any more; the audit then goes on alone to the end of the stream.
class BlockSink
{
public:
  explicit BlockSink(std::size_t max_blocks) : m_max_blocks(max_blocks) {}

  bool push(const char* data, std::size_t size)
  {
    std::vector<char> block(data, data + size);
    std::unique_lock lock(m_mutex);
    m_space.wait(lock, [&] { return m_abandoned || m_blocks.size() < m_max_blocks; });
    if (m_abandoned) {
      return false;
    }
    m_blocks.push_back(std::move(block));
    m_ready.notify_one();
    return true;
  }

  // The audit ended: `passed` says whether the stream is sound. A failed
  // audit makes the reader see a read error, not a clean end.
  void close(bool passed)
  {
    std::lock_guard lock(m_mutex);
    m_closed = true;
    m_passed = passed;
    m_ready.notify_all();
  }

  // Next block; empty at the end; nullopt when the audit failed.
  std::optional<std::vector<char>> pop()
  {
    std::unique_lock lock(m_mutex);
    m_ready.wait(lock, [&] { return m_closed || !m_blocks.empty(); });
    if (!m_blocks.empty()) {
      auto block = std::move(m_blocks.front());
      m_blocks.pop_front();
      m_space.notify_one();
      return block;
    }
    if (!m_passed) {
      return std::nullopt;
    }
    return std::vector<char>{};
  }

  // No more back-pressure: the producer runs alone, before the consumer.
  void unbound()
  {
    std::lock_guard lock(m_mutex);
    m_max_blocks = std::numeric_limits<std::size_t>::max();
  }

  // The reader stopped early (an error of its own).
  void abandon()
  {
    std::lock_guard lock(m_mutex);
    m_abandoned = true;
    m_blocks.clear();
    m_space.notify_all();
  }

private:
  std::size_t m_max_blocks;
  std::mutex m_mutex;
  std::condition_variable m_ready;
  std::condition_variable m_space;
  std::deque<std::vector<char>> m_blocks;
  bool m_closed = false;
  bool m_passed = false;
  bool m_abandoned = false;
};

// Decompresses the payload at `fd` and audits its tar structure to the end,
// handing each audited block to `sink` (null: audit only).
Status audit_structure(int fd, const Slice& slice, const ExtractLimits& limits, BlockSink* sink);

} // namespace prewarm::bundle
