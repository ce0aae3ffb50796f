// SPDX-License-Identifier: Apache-2.0
// Helpers for bundle tests: hand-built tar streams (so a test can write the
// headers a real writer never would), zstd through libarchive, test_only
// keys, and a signed-manifest round trip so an evil payload arrives with a
// valid signature and only the entry policy stands in its way.
#pragma once

#include "base/digest.hpp"
#include "base/files.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/signature.hpp"
#include "pack/key_pair.hpp"
#include "pack/manifest_signer.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace prewarm::test {

// `text` with the first `from` replaced by `to` (a test failure if absent).
inline std::string
replace_once(std::string text, std::string_view from, std::string_view to)
{
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) {
    text.replace(at, from.size(), to);
  }
  return text;
}

inline SysSeconds
test_time(int days_after_2026 = 0)
{
  using namespace std::chrono;
  return SysSeconds(sys_days(year(2026) / 11 / 1)) + days(days_after_2026);
}

// A byte-level tar writer (POSIX ustar blocks).
class RawTar
{
public:
  // `typeflag` '0' file, '5' dir, '2' symlink, ... ; `declared_size` < 0
  // means data.size().
  RawTar& entry(std::string_view name, char typeflag, std::string_view data = {}, long long declared_size = -1,
                std::string_view linkname = {}, unsigned mode = 0644)
  {
    const auto size = declared_size < 0 ? static_cast<unsigned long long>(data.size())
                                        : static_cast<unsigned long long>(declared_size);
    header(name, typeflag, size, linkname, mode);
    m_bytes.append(data);
    pad();
    return *this;
  }
  RawTar& file(std::string_view name, std::string_view data, unsigned mode = 0644)
  {
    return entry(name, '0', data, -1, {}, mode);
  }
  RawTar& dir(std::string_view name) { return entry(std::string(name) + "/", '5', {}, -1, {}, 0755); }
  // A pax header ('x' or 'g') with "key=value" records.
  RawTar& pax(char typeflag, const std::vector<std::pair<std::string, std::string>>& records)
  {
    std::string body;
    for (const auto& [key, value] : records) {
      const std::string rest = " " + key + "=" + value + "\n";
      std::size_t length = rest.size() + 1;
      while (std::to_string(length).size() + rest.size() != length) {
        ++length;
      }
      body += std::to_string(length) + rest;
    }
    header("PaxHeader/x", typeflag, body.size(), {}, 0644);
    m_bytes.append(body);
    pad();
    return *this;
  }
  RawTar& raw(std::string_view bytes)
  {
    m_bytes.append(bytes);
    return *this;
  }
  std::string finish(std::string_view trailing = {}) const
  {
    std::string out = m_bytes;
    out.append(1024, '\0');
    out.append(trailing);
    while (out.size() % 10240 != 0) {
      out.push_back('\0');
    }
    return out;
  }

private:
  void header(std::string_view name, char typeflag, unsigned long long size, std::string_view linkname, unsigned mode)
  {
    char h[512];
    std::memset(h, 0, sizeof h);
    std::memcpy(h, name.data(), std::min<std::size_t>(name.size(), 100));
    std::snprintf(h + 100, 8, "%07o", mode);
    std::snprintf(h + 108, 8, "%07o", 0);
    std::snprintf(h + 116, 8, "%07o", 0);
    std::snprintf(h + 124, 12, "%011llo", size);
    std::snprintf(h + 136, 12, "%011o", 1700000000);
    h[156] = typeflag;
    std::memcpy(h + 157, linkname.data(), std::min<std::size_t>(linkname.size(), 100));
    std::memcpy(h + 257, "ustar", 6);
    std::memcpy(h + 263, "00", 2);
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (const char c : h) {
      sum += static_cast<unsigned char>(c);
    }
    std::snprintf(h + 148, 8, "%06o", sum);
    h[155] = ' ';
    m_bytes.append(h, sizeof h);
  }
  void pad()
  {
    while (m_bytes.size() % 512 != 0) {
      m_bytes.push_back('\0');
    }
  }
  std::string m_bytes;
};

// zstd-compresses `bytes` with libarchive (raw format + zstd filter).
inline std::string
zstd_compress(std::string_view bytes)
{
  std::string out(bytes.size() + 65536, '\0');
  std::size_t used = 0;
  archive* a = archive_write_new();
  EXPECT_EQ(archive_write_set_format_raw(a), ARCHIVE_OK);
  EXPECT_EQ(archive_write_add_filter_zstd(a), ARCHIVE_OK);
  EXPECT_EQ(archive_write_set_bytes_in_last_block(a, 1), ARCHIVE_OK);
  EXPECT_EQ(archive_write_open_memory(a, out.data(), out.size(), &used), ARCHIVE_OK);
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, "data");
  archive_entry_set_filetype(e, AE_IFREG);
  EXPECT_EQ(archive_write_header(a, e), ARCHIVE_OK);
  EXPECT_EQ(archive_write_data(a, bytes.data(), bytes.size()), static_cast<la_ssize_t>(bytes.size()));
  archive_entry_free(e);
  EXPECT_EQ(archive_write_close(a), ARCHIVE_OK);
  archive_write_free(a);
  out.resize(used);
  return out;
}

inline void
write_bytes(const std::filesystem::path& path, std::string_view bytes)
{
  ASSERT_TRUE(write_file_atomic(path, bytes, 0644, Durability::none));
}

inline bundle::FileEntry
file_entry(std::string path, std::string_view content, unsigned mode = 0644)
{
  return bundle::FileEntry{std::move(path), sha256_hex(content), content.size(), mode};
}

// A Slice describing `payload`, listing `dirs` and `files`.
inline bundle::Slice
make_slice(std::string id, std::string_view payload, std::vector<std::string> dirs, std::vector<bundle::FileEntry> files)
{
  bundle::Slice s;
  s.id = std::move(id);
  s.payload_sha256 = sha256_hex(payload);
  s.payload_size = payload.size();
  s.directories = std::move(dirs);
  s.files = std::move(files);
  for (const auto& f : s.files) {
    s.uncompressed_size += f.size;
  }
  return s;
}

inline bundle::BundleManifest
make_manifest(std::vector<bundle::Slice> slices)
{
  bundle::BundleManifest m;
  m.channel = "test/unit";
  m.serial = 7;
  m.issued_at = test_time();
  m.expires = test_time(30);
  m.producer = "prewarm/test libarchive/3.6.2 zstd/1.5.4 level=3 threads=1";
  m.build_manifest_sha256 = sha256_hex("build manifest");
  m.slices = std::move(slices);
  bundle::normalize(m);
  return m;
}

inline const pack::PrivateKey&
test_only_key()
{
  static const pack::PrivateKey key = *pack::PrivateKey::generate();
  return key;
}

inline bundle::TrustStore
trust_of(const pack::PrivateKey& key)
{
  bundle::TrustStore trust;
  trust.keys.push_back(bundle::TrustedKey{key.public_key(), std::nullopt, std::nullopt});
  return trust;
}

// Serialize, sign with test_only_key, verify, parse: the Slice an installer
// would hold after a successful signature check.
inline bundle::Slice
signed_round_trip(const bundle::Slice& slice)
{
  const auto manifest = make_manifest({slice});
  EXPECT_TRUE(bundle::validate(manifest)) << bundle::validate(manifest).error().message();
  const auto bytes = bundle::serialize(manifest);
  const std::vector<pack::PrivateKey> keys{test_only_key()};
  const auto envelope = pack::sign_manifest(bytes, keys);
  EXPECT_TRUE(envelope);
  EXPECT_TRUE(bundle::verify_manifest_signature(bytes, *envelope, trust_of(test_only_key()), test_time(1)));
  auto parsed = bundle::parse(bytes);
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().message());
  return parsed ? parsed->slices.at(0) : slice;
}

} // namespace prewarm::test
