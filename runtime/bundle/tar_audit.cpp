// SPDX-License-Identifier: Apache-2.0
#include "bundle/tar_audit.hpp"

#include "base/encoding.hpp"
#include "bundle/reader_errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

namespace prewarm::bundle {

namespace {

constexpr std::size_t k_block = 512;
constexpr std::uint64_t k_max_pax_header = 64 * 1024;

// Sequential reader over the decompressed stream.
class RawStream
{
public:
  RawStream(TarBlockSource& source, std::uint64_t cap) : m_source(source), m_cap(cap) {}

  // Copies exactly `size` bytes into `out`; false at end of stream.
  Result<bool> read(char* out, std::size_t size)
  {
    std::size_t done = 0;
    while (done < size) {
      PW_ASSIGN(const bool more, fill());
      if (!more) {
        return done == 0 ? false : Result<bool>(fail(Errc::verify, "truncated tar stream", "E_PAYLOAD_FORMAT"));
      }
      const std::size_t n = std::min(size - done, m_size - m_pos);
      std::memcpy(out + done, m_data + m_pos, n);
      m_pos += n;
      done += n;
    }
    return true;
  }

  Status skip(std::uint64_t size)
  {
    while (size > 0) {
      PW_ASSIGN(const bool more, fill());
      if (!more) {
        return fail(Errc::verify, "truncated tar stream (entry data cut short)", "E_PAYLOAD_FORMAT");
      }
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, m_size - m_pos));
      m_pos += n;
      size -= n;
    }
    return {};
  }

  // After the end-of-archive marker: only zero bytes may follow.
  Status expect_zeros_to_end()
  {
    while (true) {
      PW_ASSIGN(const bool more, fill());
      if (!more) {
        return {};
      }
      if (std::any_of(m_data + m_pos, m_data + m_size, [](char c) { return c != 0; })) {
        return fail(Errc::verify, "data after the end-of-archive marker (a second archive or trailing bytes)", "E_PAYLOAD_FORMAT");
      }
      m_pos = m_size;
    }
  }

private:
  Result<bool> fill()
  {
    if (m_pos < m_size) {
      return true;
    }
    // Asking for the next block says every byte of this one has been
    // audited (a header that straddles two blocks is checked before the
    // second block is asked for, so a reader fed by the source never holds a
    // whole unchecked header).
    m_data = nullptr;
    m_size = 0;
    m_pos = 0;
    PW_ASSIGN(const auto block, m_source.next_block());
    if (block.empty()) {
      return false;
    }
    m_total += block.size();
    if (m_total > m_cap) {
      return fail(Errc::verify, fmt::format("decompressed tar stream exceeds {} bytes (declared sizes + header allowance)", m_cap), "E_LIMIT");
    }
    m_data = block.data();
    m_size = block.size();
    m_pos = 0;
    return true;
  }

  TarBlockSource& m_source;
  std::uint64_t m_cap;
  std::uint64_t m_total = 0;
  const char* m_data = nullptr;
  std::size_t m_size = 0;
  std::size_t m_pos = 0;
};

std::optional<std::uint64_t>
parse_octal_field(const char* field, std::size_t width)
{
  std::uint64_t value = 0;
  std::size_t i = 0;
  while (i < width && field[i] == ' ') {
    ++i;
  }
  bool any = false;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (value > (std::numeric_limits<std::uint64_t>::max() >> 3)) {
      return std::nullopt;
    }
    value = (value << 3) | static_cast<std::uint64_t>(field[i] - '0');
    any = true;
  }
  for (; i < width; ++i) {
    if (field[i] != ' ' && field[i] != '\0') {
      return std::nullopt; // base-256 or garbage: our writer never emits it
    }
  }
  return any ? std::optional(value) : std::nullopt;
}

std::string_view
type_name(char flag)
{
  switch (flag) {
    case '1': return "hard link";
    case '2': return "symbolic link";
    case '3': return "character device";
    case '4': return "block device";
    case '6': return "fifo";
    case '7': return "contiguous file";
    case 'g': return "global pax header";
    case 'S': return "GNU sparse file";
    case 'V': return "volume label";
    case 'L': return "GNU long name";
    case 'K': return "GNU long link name";
    case 'M': return "GNU multi-volume continuation";
    case 'D': return "GNU dump directory";
    default: return "unknown";
  }
}

struct PaxOverrides
{
  std::optional<std::uint64_t> size;
  bool linkpath = false; // allowed only before a symbolic link entry
};

// Pax records "LEN key=value\n": the size override and whether a link
// target is given.
Result<PaxOverrides>
audit_pax_records(std::string_view data, std::string_view slice_id)
{
  PaxOverrides overrides;
  auto& size = overrides.size;
  while (!data.empty()) {
    const auto space = data.find(' ');
    if (space == std::string_view::npos || space == 0 || space > 10) {
      return verify_error("E_PAYLOAD_FORMAT", fmt::format("slice {}: malformed pax record", in_quotes(slice_id)));
    }
    std::uint64_t length = 0;
    for (std::size_t i = 0; i < space; ++i) {
      if (data[i] < '0' || data[i] > '9') {
        return verify_error("E_PAYLOAD_FORMAT", fmt::format("slice {}: malformed pax record length", in_quotes(slice_id)));
      }
      length = length * 10 + static_cast<std::uint64_t>(data[i] - '0');
    }
    if (length <= space + 1 || length > data.size() || data[length - 1] != '\n') {
      return verify_error("E_PAYLOAD_FORMAT", fmt::format("slice {}: pax record length does not match", in_quotes(slice_id)));
    }
    const auto record = data.substr(space + 1, length - space - 2);
    const auto eq = record.find('=');
    if (eq == std::string_view::npos) {
      return verify_error("E_PAYLOAD_FORMAT", fmt::format("slice {}: pax record without '='", in_quotes(slice_id)));
    }
    const auto key = record.substr(0, eq);
    const auto value = record.substr(eq + 1);
    if (key.starts_with("GNU.sparse") || key == "SCHILY.devmajor" || key == "SCHILY.devminor") {
      return verify_error("E_TYPE", fmt::format("slice {}: pax record {} (hard links, sparse files and devices are not allowed)", in_quotes(slice_id), in_quotes(key)));
    }
    if ((key == "path" || key == "linkpath") && value.find('\0') != std::string_view::npos) {
      return verify_error("E_PATH", fmt::format("slice {}: NUL byte inside a pax {}", in_quotes(slice_id), key));
    }
    if (key == "linkpath") {
      overrides.linkpath = true;
    }
    if (key == "size") {
      std::uint64_t v = 0;
      if (value.empty() || value.size() > 19 || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return verify_error("E_PAYLOAD_FORMAT", fmt::format("slice {}: pax size {} is not a number", in_quotes(slice_id), in_quotes(value)));
      }
      for (const char c : value) {
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
      }
      size = v;
    }
    data.remove_prefix(length);
  }
  return overrides;
}

} // namespace

Status
audit_tar_stream(TarBlockSource& source, std::string_view slice_id, const TarAuditLimits& limits)
{
  RawStream stream(source, limits.max_stream_bytes);
  std::array<char, k_block> header{};
  std::uint64_t headers = 0;
  std::uint64_t pax_size = 0;
  bool pax_has_size = false;
  bool pax_has_linkpath = false;
  bool pending_pax = false;
  const auto where = [&](std::string_view what) { return fmt::format("slice {}: tar header {}: {}", in_quotes(slice_id), headers, what); };
  while (true) {
    PW_ASSIGN(const bool got, stream.read(header.data(), k_block));
    if (!got) {
      return verify_error("E_PAYLOAD_FORMAT", fmt::format("slice {}: tar stream ends without an end-of-archive marker", in_quotes(slice_id)));
    }
    if (std::all_of(header.begin(), header.end(), [](char c) { return c == 0; })) {
      if (pending_pax) {
        return verify_error("E_PAYLOAD_FORMAT", where("pax header not followed by an entry"));
      }
      PW_ASSIGN(const bool second, stream.read(header.data(), k_block));
      if (!second || !std::all_of(header.begin(), header.end(), [](char c) { return c == 0; })) {
        return verify_error("E_PAYLOAD_FORMAT", where("end-of-archive marker is not two zero blocks"));
      }
      PW_TRY_CTX(fmt::format("slice {}", in_quotes(slice_id)), stream.expect_zeros_to_end());
      return {};
    }
    ++headers;
    if (headers > 2 * (limits.max_entries + 1)) {
      return verify_error("E_LIMIT", where(fmt::format("more than {} entries", limits.max_entries)));
    }
    // Checksum: sum of all bytes with the checksum field read as spaces.
    const auto stored = parse_octal_field(header.data() + 148, 8);
    unsigned long sum = 0;
    for (std::size_t i = 0; i < k_block; ++i) {
      sum += (i >= 148 && i < 156) ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(header[i]);
    }
    if (!stored || *stored != sum) {
      return verify_error("E_PAYLOAD_FORMAT", where("bad header checksum"));
    }
    if (std::memcmp(header.data() + 257, "ustar\0" "00", 8) != 0) {
      return verify_error("E_PAYLOAD_FORMAT", where("not a POSIX ustar/pax header"));
    }
    const char flag = header[156];
    const auto size_field = parse_octal_field(header.data() + 124, 12);
    if (!size_field) {
      return verify_error("E_PAYLOAD_FORMAT", where("size field is not octal"));
    }
    if (flag == 'x') {
      if (pending_pax) {
        return verify_error("E_PAYLOAD_FORMAT", where("two pax headers in a row"));
      }
      if (*size_field > k_max_pax_header) {
        return verify_error("E_LIMIT", where(fmt::format("pax header of {} bytes (at most {})", *size_field, k_max_pax_header)));
      }
      std::string data(static_cast<std::size_t>(*size_field), '\0');
      PW_ASSIGN(const bool ok, stream.read(data.data(), data.size()));
      if (!ok && !data.empty()) {
        return verify_error("E_PAYLOAD_FORMAT", where("truncated pax header"));
      }
      PW_TRY(stream.skip((k_block - (*size_field % k_block)) % k_block));
      PW_ASSIGN(const auto overrides, audit_pax_records(data, slice_id));
      pax_has_size = overrides.size.has_value();
      pax_size = overrides.size.value_or(0);
      pax_has_linkpath = overrides.linkpath;
      pending_pax = true;
      continue;
    }
    if (flag != '0' && flag != '\0' && flag != '5' && flag != '2') {
      return verify_error("E_TYPE", where(fmt::format("{} entry (type '{}'); only regular files, directories and symbolic links are allowed",
                                                       type_name(flag), flag >= 0x20 && flag < 0x7f ? std::string(1, flag) : "?")));
    }
    const std::uint64_t size = pax_has_size ? pax_size : *size_field;
    const bool linkpath = pax_has_linkpath;
    pending_pax = false;
    pax_has_size = false;
    pax_has_linkpath = false;
    if (flag == '5' && size != 0) {
      return verify_error("E_PAYLOAD_FORMAT", where("directory entry with data"));
    }
    if (flag == '2' && size != 0) {
      return verify_error("E_PAYLOAD_FORMAT", where("symbolic link entry with data"));
    }
    if (linkpath && flag != '2') {
      return verify_error("E_TYPE", where("pax link target before an entry that is not a symbolic link"));
    }
    if (size > limits.max_file_bytes) {
      return verify_error("E_LIMIT", where(fmt::format("entry of {} bytes (at most {})", size, limits.max_file_bytes)));
    }
    PW_TRY(stream.skip(size + (k_block - size % k_block) % k_block));
  }
}

namespace {

// A stream in memory, handed on in one block.
class BytesSource : public TarBlockSource
{
public:
  explicit BytesSource(std::string_view bytes) : m_bytes(bytes) {}

  Result<std::span<const char>> next_block() override
  {
    const std::span<const char> block(m_bytes.data(), m_bytes.size());
    m_bytes = {};
    return block;
  }

private:
  std::string_view m_bytes;
};

} // namespace

Status
audit_tar_bytes(std::string_view stream, std::string_view slice_id, const TarAuditLimits& limits)
{
  BytesSource source(stream);
  return audit_tar_stream(source, slice_id, limits);
}

} // namespace prewarm::bundle
