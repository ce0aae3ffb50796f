// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the tar structure audit (bundle/tar_audit.hpp) on bytes, with
// no file, no decompression and no extraction around it.
// Input: a decompressed tar stream. The first byte picks the block size the
// stream is handed over in (1 to 256 times 64 bytes), the rest is the stream.
// Invariants: no crash/UB; the verdict is the same for the stream in one
// block and in blocks of that size (a header or pax record that straddles
// two blocks is read as a whole); every refusal is Errc::verify with one of
// the documented codes.
#include "bundle/tar_audit.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

namespace {

// The stream in blocks of `block` bytes.
class ChunkedSource : public prewarm::bundle::TarBlockSource
{
public:
  ChunkedSource(std::string_view bytes, std::size_t block) : m_bytes(bytes), m_block(block) {}

  prewarm::Result<std::span<const char>> next_block() override
  {
    const std::size_t n = std::min(m_block, m_bytes.size());
    const std::span<const char> out(m_bytes.data(), n);
    m_bytes.remove_prefix(n);
    return out;
  }

private:
  std::string_view m_bytes;
  std::size_t m_block;
};

bool
documented_code(std::string_view code)
{
  return code == "E_PAYLOAD_FORMAT" || code == "E_TYPE" || code == "E_PATH" || code == "E_LIMIT";
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0 || size > (1u << 20)) {
    return 0;
  }
  const std::size_t block = (static_cast<std::size_t>(data[0]) + 1) * 64;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  prewarm::bundle::TarAuditLimits limits;
  limits.max_stream_bytes = 1u << 20;
  limits.max_entries = 64;
  limits.max_file_bytes = 1u << 19;

  const auto whole = prewarm::bundle::audit_tar_bytes(stream, "fuzz", limits);
  ChunkedSource source(stream, block);
  const auto chunked = prewarm::bundle::audit_tar_stream(source, "fuzz", limits);
  if (whole.has_value() != chunked.has_value()) {
    std::abort();
  }
  if (!whole) {
    if (whole.error().category() != prewarm::Errc::verify || !documented_code(whole.error().code()) ||
        whole.error().code() != chunked.error().code()) {
      std::abort();
    }
  }
  return 0;
}
