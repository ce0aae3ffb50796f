// SPDX-License-Identifier: Apache-2.0
// The tar structure audit on bytes alone (bundle/tar_audit.hpp): what it
// passes, what it refuses with which code, and that the verdict does not
// depend on how the stream is cut into blocks.
#include "bundle_test_support.hpp"

#include "bundle/tar_audit.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace prewarm::bundle {
namespace {

using test::RawTar;

TarAuditLimits
limits()
{
  return TarAuditLimits{1u << 20, 16, 1u << 16};
}

std::string
code_of(const Status& status)
{
  return status ? "ok" : status.error().code();
}

// The stream in blocks of `size` bytes.
class Chunks : public TarBlockSource
{
public:
  Chunks(std::string_view bytes, std::size_t size) : m_bytes(bytes), m_size(size) {}
  Result<std::span<const char>> next_block() override
  {
    const auto n = std::min(m_size, m_bytes.size());
    const std::span<const char> out(m_bytes.data(), n);
    m_bytes.remove_prefix(n);
    ++blocks;
    return out;
  }
  int blocks = 0;

private:
  std::string_view m_bytes;
  std::size_t m_size;
};

TEST(TarAudit, PassesFilesAndDirectories)
{
  const auto tar = RawTar().dir("pocl").dir("pocl/aa").file("pocl/aa/k.bin", "kernel").finish();
  EXPECT_EQ(code_of(audit_tar_bytes(tar, "s", limits())), "ok");
}

TEST(TarAudit, SameVerdictInAnyBlockSize)
{
  const auto good = RawTar().dir("pocl").file("pocl/k.bin", std::string(1500, 'k')).finish();
  const auto global = RawTar().pax('g', {{"comment", "x"}}).dir("pocl").finish();
  for (const std::size_t size : {1, 7, 511, 512, 513, 4096}) {
    Chunks good_chunks(good, size);
    EXPECT_EQ(code_of(audit_tar_stream(good_chunks, "s", limits())), "ok") << size;
    EXPECT_GT(good_chunks.blocks, 1) << size;
    Chunks global_chunks(global, size);
    EXPECT_EQ(code_of(audit_tar_stream(global_chunks, "s", limits())), "E_TYPE") << size;
  }
}

TEST(TarAudit, RefusesWhatTheTarReaderHides)
{
  EXPECT_EQ(code_of(audit_tar_bytes(RawTar().pax('g', {{"comment", "x"}}).dir("pocl").finish(), "s", limits())),
            "E_TYPE");
  EXPECT_EQ(code_of(audit_tar_bytes(RawTar().entry("././@LongLink", 'L', "pocl/long").finish(), "s", limits())),
            "E_TYPE");
  EXPECT_EQ(code_of(audit_tar_bytes(RawTar().dir("pocl").finish("trailing"), "s", limits())), "E_PAYLOAD_FORMAT");
  EXPECT_EQ(code_of(audit_tar_bytes(RawTar().pax('x', {{"linkpath", "/etc"}}).file("pocl/k", "k").finish(), "s",
                                    limits())),
            "E_TYPE");
}

TEST(TarAudit, PassesSymbolicLinksWithoutData)
{
  // Whether a link is the signed one is the extraction's check; the audit
  // sees that it holds no data, and a pax link target only on a link.
  EXPECT_EQ(code_of(audit_tar_bytes(RawTar().dir("pocl").file("pocl/k", "k").entry("pocl/l", '2', {}, 0, "k").finish(), "s",
                                    limits())),
            "ok");
  EXPECT_EQ(code_of(audit_tar_bytes(RawTar().dir("pocl").pax('x', {{"linkpath", std::string(120, 'k')}}).entry("pocl/l", '2', {}, 0, "k").finish(),
                                    "s", limits())),
            "ok");
  EXPECT_EQ(code_of(audit_tar_bytes(RawTar().dir("pocl").entry("pocl/l", '2', "data", -1, "k").finish(), "s", limits())),
            "E_PAYLOAD_FORMAT");
  EXPECT_EQ(code_of(audit_tar_bytes(RawTar().dir("pocl").entry("pocl/h", '1', {}, 0, "pocl").finish(), "s", limits())),
            "E_TYPE");
}

TEST(TarAudit, RefusesTruncatedAndOversizedStreams)
{
  const auto tar = RawTar().dir("pocl").file("pocl/k.bin", "kernel").finish();
  EXPECT_EQ(code_of(audit_tar_bytes(std::string_view(tar).substr(0, 700), "s", limits())), "E_PAYLOAD_FORMAT");
  auto small = limits();
  small.max_stream_bytes = 1024;
  EXPECT_EQ(code_of(audit_tar_bytes(tar, "s", small)), "E_LIMIT");
  auto one_byte_files = limits();
  one_byte_files.max_file_bytes = 1;
  EXPECT_EQ(code_of(audit_tar_bytes(tar, "s", one_byte_files)), "E_LIMIT");
}

TEST(TarAudit, NamesTheSliceAndHeader)
{
  const auto status = audit_tar_bytes(RawTar().dir("pocl").entry("pocl/fifo", '6').finish(), "slice-7", limits());
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("\"slice-7\""), std::string::npos) << status.error().message();
  EXPECT_NE(status.error().message().find("tar header 2"), std::string::npos) << status.error().message();
}

} // namespace
} // namespace prewarm::bundle
