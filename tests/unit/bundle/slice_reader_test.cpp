// SPDX-License-Identifier: Apache-2.0
// The entry policy against crafted payloads. Every evil payload here comes
// with a correctly signed manifest whose payload digest matches, so what stops
// it is the reader's policy, not the signature.
#include "bundle_test_support.hpp"

#include "base/files.hpp"
#include "bundle/slice_reader.hpp"
#include "pack/slice_writer.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace prewarm::bundle {
namespace {

namespace fs = std::filesystem;
using test::file_entry;
using test::RawTar;

class SliceReaderTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = TempDir::create("prewarm-test-");
    ASSERT_TRUE(dir);
    m_dir.emplace(std::move(*dir));
    m_staging = m_dir->path() / "root" / "staging";
    fs::create_directories(m_staging);
    m_staging_fd = UniqueFd(::open(m_staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(m_staging_fd);
  }

  const fs::path& dir() const { return m_dir->path(); }

  // Writes `payload`, signs a manifest listing `dirs` + `files` for it, and
  // extracts it into staging.
  Status extract(std::string_view payload, std::vector<std::string> dirs, std::vector<FileEntry> files,
                 const ExtractLimits& limits = {})
  {
    const auto path = dir() / fmt::format("payload{}.tar.zst", m_count++);
    test::write_bytes(path, payload);
    const auto slice = test::signed_round_trip(test::make_slice("s", payload, std::move(dirs), std::move(files)));
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    return extract_slice(fd.get(), slice, m_staging_fd.get(), limits);
  }

  void expect_code(const Status& status, std::string_view code)
  {
    ASSERT_FALSE(status) << "expected " << code;
    EXPECT_EQ(status.error().code(), code) << status.error().message();
    EXPECT_EQ(status.error().category(), Errc::verify) << status.error().message();
    // Nothing ever lands beside the staging directory.
    std::size_t siblings = 0;
    for (const auto& e : fs::directory_iterator(m_staging.parent_path())) {
      siblings += e.path() != m_staging;
    }
    EXPECT_EQ(siblings, 0u);
  }

  static std::string one_file_tar(std::string_view name, std::string_view content)
  {
    return test::zstd_compress(RawTar().dir("pocl").file(name, content).finish());
  }

  std::optional<TempDir> m_dir;
  fs::path m_staging;
  UniqueFd m_staging_fd;
  int m_count = 0;
};

TEST_F(SliceReaderTest, GoodSliceFromTheRealWriter)
{
  const auto source = dir() / "source";
  fs::create_directories(source / "pocl" / "ab");
  fs::create_directories(source / "programs");
  test::write_bytes(source / "pocl" / "ab" / "kernel.so", "compiled kernel");
  test::write_bytes(source / "programs" / "run.sh", "#!/bin/sh\n");
  fs::permissions(source / "programs" / "run.sh", fs::perms::owner_all);
  test::write_bytes(source / "programs" / "empty", "");
  pack::SliceWriteOptions options;
  options.mtime = test::test_time();
  const auto written = pack::write_slice(source, dir() / "good.tar.zst", options);
  ASSERT_TRUE(written) << written.error().message();

  Slice slice;
  slice.id = "good";
  slice.payload_sha256 = written->payload_sha256;
  slice.payload_size = written->payload_size;
  slice.uncompressed_size = written->uncompressed_size;
  slice.directories = written->directories;
  slice.files = written->files;
  slice = test::signed_round_trip(slice);
  UniqueFd fd(::open((dir() / "good.tar.zst").c_str(), O_RDONLY | O_CLOEXEC));
  const auto status = extract_slice(fd.get(), slice, m_staging_fd.get());
  ASSERT_TRUE(status) << status.error().message();

  const auto read = [&](const fs::path& p) { return *read_file((m_staging / p).string()); };
  EXPECT_EQ(read("pocl/ab/kernel.so"), "compiled kernel");
  EXPECT_EQ(read("programs/run.sh"), "#!/bin/sh\n");
  EXPECT_EQ(read("programs/empty"), "");
  struct stat st{};
  ASSERT_EQ(::stat((m_staging / "programs/run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(::stat((m_staging / "pocl/ab/kernel.so").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ASSERT_EQ(::stat((m_staging / "pocl/ab").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  // Installed files carry the install time, not the archive's fixed mtime.
  EXPECT_GT(st.st_mtime, test::test_time().time_since_epoch().count());
  EXPECT_TRUE(fsync_tree(m_staging_fd.get()));
}

TEST_F(SliceReaderTest, FlippedPayloadBitNeverReachesLibarchive)
{
  auto payload = one_file_tar("pocl/k", "kernel");
  const auto path = dir() / "flipped.tar.zst";
  const auto slice = test::signed_round_trip(test::make_slice("s", payload, {"pocl"}, {file_entry("pocl/k", "kernel")}));
  payload[payload.size() / 2] ^= 0x10;
  test::write_bytes(path, payload);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  const auto before = archive_reader_open_count();
  expect_code(extract_slice(fd.get(), slice, m_staging_fd.get()), "E_PAYLOAD_DIGEST");
  EXPECT_EQ(archive_reader_open_count(), before);
  EXPECT_TRUE(fs::is_empty(m_staging));
}

TEST_F(SliceReaderTest, PayloadSizeMismatch)
{
  const auto payload = one_file_tar("pocl/k", "kernel");
  const auto path = dir() / "longer.tar.zst";
  const auto slice = test::signed_round_trip(test::make_slice("s", payload, {"pocl"}, {file_entry("pocl/k", "kernel")}));
  test::write_bytes(path, payload + "x");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  const auto before = archive_reader_open_count();
  expect_code(verify_payload(fd.get(), slice), "E_PAYLOAD_SIZE");
  expect_code(extract_slice(fd.get(), slice, m_staging_fd.get()), "E_PAYLOAD_SIZE");
  EXPECT_EQ(archive_reader_open_count(), before);
}

TEST_F(SliceReaderTest, DotDotAndAbsolutePaths)
{
  for (const std::string bad : {"pocl/../evil", "pocl/a/../../evil", "/etc/passwd", "../evil", "pocl//x", "pocl/./x", "./pocl/x"}) {
    const auto payload = test::zstd_compress(RawTar().dir("pocl").file(bad, "evil").finish());
    expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "evil")}), "E_PATH");
  }
  EXPECT_FALSE(fs::exists(dir() / "root" / "evil"));
  EXPECT_FALSE(fs::exists(dir() / "evil"));
}

TEST_F(SliceReaderTest, BackslashAndNonAsciiNames)
{
  for (const std::string bad : {"pocl/a\\b", "pocl/caf\xc3\xa9", "pocl/a b"}) {
    const auto payload = test::zstd_compress(RawTar().dir("pocl").file(bad, "x").finish());
    expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "x")}), "E_PATH");
  }
}

TEST_F(SliceReaderTest, SymlinkEntryNotInTheManifest)
{
  const auto payload = test::zstd_compress(
    RawTar().dir("pocl").entry("pocl/etc", '2', {}, 0, "/etc").file("pocl/etc/passwd", "x").finish());
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "x")}), "E_ENTRY_NOT_IN_MANIFEST");
  EXPECT_TRUE(fs::is_empty(m_staging));
}

TEST_F(SliceReaderTest, LinksAndNamesAsTheManifestStatesThem)
{
  const std::string device = "pocl/pthread-skylake-avx512-AMD EPYC";
  const auto payload = test::zstd_compress(RawTar()
                                             .dir("pocl")
                                             .file("pocl/0123abcd", "binary")
                                             .entry("pocl/blur.cl.bin", '2', {}, 0, "0123abcd", 0777)
                                             .dir("pocl/pthread-skylake-avx512-AMD%20EPYC")
                                             .file("pocl/pthread-skylake-avx512-AMD%20EPYC/fft%20%281%29.bin", "fft")
                                             .entry("pocl/pthread-skylake-avx512-AMD%20EPYC/up", '2', {}, 0, "../0123abcd", 0777)
                                             .finish());
  auto slice = test::make_slice("s", payload, {"pocl", device},
                                {file_entry("pocl/0123abcd", "binary"), file_entry(device + "/fft (1).bin", "fft")});
  slice.links = {{"pocl/blur.cl.bin", "0123abcd"}, {device + "/up", "../0123abcd"}};
  slice = test::signed_round_trip(slice);
  test::write_bytes(dir() / "links.tar.zst", payload);
  UniqueFd fd(::open((dir() / "links.tar.zst").c_str(), O_RDONLY | O_CLOEXEC));
  const auto status = extract_slice(fd.get(), slice, m_staging_fd.get());
  ASSERT_TRUE(status) << status.error().message();
  EXPECT_EQ(fs::read_symlink(m_staging / "pocl/blur.cl.bin"), "0123abcd");
  EXPECT_EQ(fs::read_symlink(m_staging / device / "up"), "../0123abcd");
  // Read through the link as the application does (the installer never follows it).
  std::ifstream through(m_staging / "pocl/blur.cl.bin");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(through), {}), "binary");
  EXPECT_EQ(*read_file((m_staging / device / "fft (1).bin").string()), "fft");
  EXPECT_TRUE(fsync_tree(m_staging_fd.get()));
}

TEST_F(SliceReaderTest, LinkTargetOtherThanSigned)
{
  const auto payload = test::zstd_compress(
    RawTar().dir("pocl").file("pocl/a", "x").file("pocl/b", "y").entry("pocl/l", '2', {}, 0, "b", 0777).finish());
  auto slice = test::make_slice("s", payload, {"pocl"}, {file_entry("pocl/a", "x"), file_entry("pocl/b", "y")});
  slice.links = {{"pocl/l", "a"}};
  slice = test::signed_round_trip(slice);
  test::write_bytes(dir() / "other.tar.zst", payload);
  UniqueFd fd(::open((dir() / "other.tar.zst").c_str(), O_RDONLY | O_CLOEXEC));
  expect_code(extract_slice(fd.get(), slice, m_staging_fd.get()), "E_LINK_TARGET");
  EXPECT_FALSE(fs::exists(fs::symlink_status(m_staging / "pocl/l")));
  // A link listed but a file in the payload, and the other way round.
  const auto as_file = test::zstd_compress(RawTar().dir("pocl").file("pocl/a", "x").file("pocl/l", "x").finish());
  auto listed_link = test::make_slice("s", as_file, {"pocl"}, {file_entry("pocl/a", "x")});
  listed_link.links = {{"pocl/l", "a"}};
  listed_link = test::signed_round_trip(listed_link);
  test::write_bytes(dir() / "as_file.tar.zst", as_file);
  UniqueFd fd2(::open((dir() / "as_file.tar.zst").c_str(), O_RDONLY | O_CLOEXEC));
  fs::remove_all(m_staging / "pocl");
  expect_code(extract_slice(fd2.get(), listed_link, m_staging_fd.get()), "E_TYPE");
  const auto as_link = test::zstd_compress(RawTar().dir("pocl").file("pocl/a", "x").entry("pocl/l", '2', {}, 0, "a").finish());
  fs::remove_all(m_staging / "pocl");
  expect_code(extract(as_link, {"pocl"}, {file_entry("pocl/a", "x"), file_entry("pocl/l", "")}), "E_TYPE");
}

TEST_F(SliceReaderTest, NameNotInTheWritersSpelling)
{
  // The manifest names "pocl/a b"; the stream must spell it "pocl/a%20b".
  const auto payload = test::zstd_compress(RawTar().dir("pocl").file("pocl/a b", "x").finish());
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/a b", "x")}), "E_PATH");
  const auto lower = test::zstd_compress(RawTar().dir("pocl").file("pocl/caf%c3%a9", "x").finish());
  expect_code(extract(lower, {"pocl"}, {file_entry("pocl/caf\xc3\xa9", "x")}), "E_PATH");
}

TEST_F(SliceReaderTest, HardlinkEntry)
{
  const auto payload = test::zstd_compress(
    RawTar().dir("pocl").file("pocl/a", "x").entry("pocl/b", '1', {}, 0, "pocl/a").finish());
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/a", "x"), file_entry("pocl/b", "x")}), "E_TYPE");
}

TEST_F(SliceReaderTest, DevicesFifosSparseVolumeAndGlobalPax)
{
  const std::vector<char> types{'3', '4', '6', 'S', 'V', 'L', 'K', '7'};
  for (const char type : types) {
    const auto payload = test::zstd_compress(RawTar().dir("pocl").entry("pocl/x", type, {}, 0).finish());
    expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "")}), "E_TYPE");
  }
  // A global pax header: libarchive 3.6.2 would skip it silently.
  const auto global = test::zstd_compress(RawTar().pax('g', {{"comment", "hi"}}).dir("pocl").file("pocl/x", "x").finish());
  expect_code(extract(global, {"pocl"}, {file_entry("pocl/x", "x")}), "E_TYPE");
  // A pax linkpath record on a regular file (a symbolic link may have one).
  const auto linkpath = test::zstd_compress(
    RawTar().dir("pocl").pax('x', {{"linkpath", "/etc/passwd"}}).file("pocl/x", "x").finish());
  expect_code(extract(linkpath, {"pocl"}, {file_entry("pocl/x", "x")}), "E_TYPE");
  // A symbolic link entry carrying data.
  const auto link_data = test::zstd_compress(RawTar().dir("pocl").entry("pocl/x", '2', "data", -1, "y").finish());
  expect_code(extract(link_data, {"pocl"}, {file_entry("pocl/x", "")}), "E_PAYLOAD_FORMAT");
}

TEST_F(SliceReaderTest, PaxPathOverridingTheUstarName)
{
  // The ustar name is listed; the pax path that libarchive uses is not.
  const auto renamed = test::zstd_compress(RawTar().dir("pocl").pax('x', {{"path", "pocl/other"}}).file("pocl/x", "x").finish());
  expect_code(extract(renamed, {"pocl"}, {file_entry("pocl/x", "x")}), "E_ENTRY_NOT_IN_MANIFEST");
  const auto escaping = test::zstd_compress(RawTar().dir("pocl").pax('x', {{"path", "pocl/../../evil"}}).file("pocl/x", "x").finish());
  expect_code(extract(escaping, {"pocl"}, {file_entry("pocl/x", "x")}), "E_PATH");
}

TEST_F(SliceReaderTest, PaxSizeHidingAnInnerArchive)
{
  // TARmageddon shape: ustar size 0, pax size N wrapping an inner tar. The
  // manifest (signed by a confused producer) lists a 0-byte file.
  const auto inner = RawTar().file("pocl/inner", "smuggled").finish();
  RawTar tar;
  tar.dir("pocl").pax('x', {{"size", std::to_string(inner.size())}}).entry("pocl/x", '0', inner, 0);
  expect_code(extract(test::zstd_compress(tar.finish()), {"pocl"}, {file_entry("pocl/x", "")}), "E_ENTRY_SIZE");
}

TEST_F(SliceReaderTest, DuplicateEntry)
{
  const auto payload = test::zstd_compress(RawTar().dir("pocl").file("pocl/x", "x").file("pocl/x", "x").finish());
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "x")}), "E_DUPLICATE");
  // Twice as a directory too.
  const auto dirs = test::zstd_compress(RawTar().dir("pocl").dir("pocl").file("pocl/x", "x").finish());
  expect_code(extract(dirs, {"pocl"}, {file_entry("pocl/x", "x")}), "E_DUPLICATE");
}

TEST_F(SliceReaderTest, SmuggledEntryNotInManifest)
{
  const auto payload = test::zstd_compress(RawTar().dir("pocl").file("pocl/x", "x").file("pocl/extra", "evil").finish());
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "x")}), "E_ENTRY_NOT_IN_MANIFEST");
}

TEST_F(SliceReaderTest, MissingEntry)
{
  const auto payload = one_file_tar("pocl/x", "x");
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "x"), file_entry("pocl/y", "y")}), "E_ENTRY_MISSING");
}

TEST_F(SliceReaderTest, HeaderSizeMismatch)
{
  const auto payload = one_file_tar("pocl/x", "longer content");
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "short")}), "E_ENTRY_SIZE");
}

TEST_F(SliceReaderTest, DigestMismatch)
{
  const auto payload = one_file_tar("pocl/x", "abcdef");
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "abcdeg")}), "E_ENTRY_DIGEST");
}

TEST_F(SliceReaderTest, TypeDisagreesWithManifest)
{
  const auto payload = test::zstd_compress(RawTar().dir("pocl").dir("pocl/x").finish());
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "")}), "E_TYPE");
}

TEST_F(SliceReaderTest, TruncatedTarStream)
{
  auto tar = RawTar().dir("pocl").file("pocl/x", std::string(4000, 'x')).finish();
  tar.resize(1536); // header of pocl/x and part of its data
  expect_code(extract(test::zstd_compress(tar), {"pocl"}, {file_entry("pocl/x", std::string(4000, 'x'))}), "E_PAYLOAD_FORMAT");
}

TEST_F(SliceReaderTest, TrailingDataAndConcatenatedArchive)
{
  const auto second = RawTar().file("pocl/y", "y").finish();
  const auto payload = test::zstd_compress(RawTar().dir("pocl").file("pocl/x", "x").finish(second));
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "x")}), "E_PAYLOAD_FORMAT");
}

TEST_F(SliceReaderTest, UncompressedTarIsNotAccepted)
{
  const auto payload = RawTar().dir("pocl").file("pocl/x", "x").finish();
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "x")}), "E_PAYLOAD_FORMAT");
}

TEST_F(SliceReaderTest, BadHeaderChecksum)
{
  auto tar = RawTar().dir("pocl").file("pocl/x", "x").finish();
  tar[512 + 100] = '7'; // mode byte of pocl/x, checksum not updated
  expect_code(extract(test::zstd_compress(tar), {"pocl"}, {file_entry("pocl/x", "x")}), "E_PAYLOAD_FORMAT");
}

TEST_F(SliceReaderTest, FileBeforeItsDirectory)
{
  const auto payload = test::zstd_compress(RawTar().file("pocl/x", "x").dir("pocl").finish());
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/x", "x")}), "E_PAYLOAD_FORMAT");
}

TEST_F(SliceReaderTest, ArchiveModesNeverApply)
{
  const auto payload = test::zstd_compress(RawTar().entry("pocl/", '5', {}, -1, {}, 01777).file("pocl/x", "x", 04777).finish());
  ASSERT_TRUE(extract(payload, {"pocl"}, {file_entry("pocl/x", "x")}));
  struct stat st{};
  ASSERT_EQ(::stat((m_staging / "pocl/x").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ASSERT_EQ(::stat((m_staging / "pocl").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST_F(SliceReaderTest, PlantedSymlinkInStagingIsNotFollowed)
{
  // A directory of an earlier slice swapped for a symlink to outside.
  const auto outside = dir() / "outside";
  fs::create_directories(outside);
  fs::create_symlink(outside, m_staging / "pocl");
  const auto payload = one_file_tar("pocl/x", "x");
  const auto status = extract(payload, {"pocl"}, {file_entry("pocl/x", "x")});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), "E_PATH") << status.error().message();
  EXPECT_TRUE(fs::is_empty(outside));
}

TEST_F(SliceReaderTest, SecondSliceSharesDirectoriesButNotFiles)
{
  ASSERT_TRUE(extract(one_file_tar("pocl/x", "x"), {"pocl"}, {file_entry("pocl/x", "x")}));
  ASSERT_TRUE(extract(one_file_tar("pocl/y", "y"), {"pocl"}, {file_entry("pocl/y", "y")}));
  expect_code(extract(one_file_tar("pocl/y", "y"), {"pocl"}, {file_entry("pocl/y", "y")}), "E_DUPLICATE");
}

TEST_F(SliceReaderTest, Limits)
{
  const auto payload = test::zstd_compress(RawTar().dir("pocl").file("pocl/a", "aaaa").file("pocl/b", "bbbb").finish());
  const std::vector<FileEntry> files{file_entry("pocl/a", "aaaa"), file_entry("pocl/b", "bbbb")};
  ExtractLimits few_entries;
  few_entries.max_entries = 2;
  expect_code(extract(payload, {"pocl"}, files, few_entries), "E_LIMIT");
  ExtractLimits small_files;
  small_files.max_file_bytes = 3;
  expect_code(extract(payload, {"pocl"}, files, small_files), "E_LIMIT");
  ExtractLimits small_total;
  small_total.max_uncompressed_bytes = 7;
  expect_code(extract(payload, {"pocl"}, files, small_total), "E_LIMIT");
  ExtractLimits small_payload;
  small_payload.max_payload_bytes = 10;
  expect_code(extract(payload, {"pocl"}, files, small_payload), "E_LIMIT");
  ExtractLimits shallow;
  shallow.max_depth = 0;
  expect_code(extract(payload, {"pocl"}, files, shallow), "E_PATH");
}

TEST_F(SliceReaderTest, MoreEntriesThanTheManifestCounts)
{
  // The manifest lists one file; the tar repeats the same dir many times:
  // stopped by the duplicate rule before any counter could overflow.
  RawTar tar;
  tar.dir("pocl");
  for (int i = 0; i < 100; ++i) {
    tar.dir("pocl");
  }
  expect_code(extract(test::zstd_compress(tar.finish()), {"pocl"}, {}), "E_DUPLICATE");
}

TEST_F(SliceReaderTest, ExpansionRatio)
{
  // 80 MiB of zeros compress to a few KiB: an honest manifest still trips the ratio.
  const std::string zeros(80u << 20, '\0');
  const auto payload = test::zstd_compress(RawTar().dir("pocl").file("pocl/z", zeros).finish());
  expect_code(extract(payload, {"pocl"}, {file_entry("pocl/z", zeros)}), "E_LIMIT");
}

} // namespace
} // namespace prewarm::bundle

namespace prewarm::bundle {
namespace {

// Random byte mutations of the tar stream (recompressed and re-signed, so
// the digest matches): extraction either reproduces the listed files exactly
// or stops with a named error; nothing appears outside staging.
TEST_F(SliceReaderTest, MutatedTarStreamsFailClosed)
{
  const auto tar = RawTar().dir("pocl").dir("pocl/ab").file("pocl/ab/k", "kernel").file("pocl/z", std::string(700, 'z')).finish();
  const std::vector<FileEntry> files{file_entry("pocl/ab/k", "kernel"), file_entry("pocl/z", std::string(700, 'z'))};
  std::uint64_t state = 99;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  int accepted = 0;
  for (int i = 0; i < 150; ++i) {
    auto mutated = tar;
    const auto at = next() % 3072; // headers and data of the first entries
    mutated[at] = static_cast<char>(next() & 0xff);
    fs::remove_all(m_staging);
    fs::create_directories(m_staging);
    m_staging_fd = UniqueFd(::open(m_staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    const auto status = extract(test::zstd_compress(mutated), {"pocl", "pocl/ab"}, files);
    if (status) {
      ++accepted;
      EXPECT_EQ(*read_file((m_staging / "pocl/ab/k").string()), "kernel");
      EXPECT_EQ(*read_file((m_staging / "pocl/z").string()), std::string(700, 'z'));
    } else {
      EXPECT_FALSE(status.error().code().empty()) << status.error().message();
    }
    for (const auto& e : fs::directory_iterator(m_staging.parent_path())) {
      EXPECT_EQ(e.path(), m_staging);
    }
  }
  // Mutations in ignored fields (mtime, uid, padding) may still extract.
  EXPECT_LT(accepted, 150);
}

} // namespace
} // namespace prewarm::bundle
