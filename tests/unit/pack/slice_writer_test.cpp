// SPDX-License-Identifier: Apache-2.0
#include "bundle_test_support.hpp"

#include "base/files.hpp"
#include "pack/slice_writer.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>

namespace prewarm::pack {
namespace {

namespace fs = std::filesystem;

struct TreeFile
{
  std::string path;
  std::string content;
  bool executable = false;
};

const std::vector<TreeFile> k_tree = {
  {"pocl/ab/cd/kernel.so", "kernel bytes"},
  {"pocl/ab/cd/kernel.cl", "__kernel void f() {}"},
  {"pocl/zz", std::string(100000, 'z')},
  {"programs/0123/prog.bin", "binary", true},
  {"programs/a.b", "dot sorts before slash"},
  {"programs/a/b", "slash after dot"},
  {"neo/" + std::string(150, 'n'), "long name needs a pax header"},
};

// Builds the tree in `order`, with per-file mtimes and a umask.
void
make_tree(const fs::path& root, std::vector<TreeFile> files, unsigned seed, mode_t umask_value)
{
  std::mt19937 rng(seed);
  std::shuffle(files.begin(), files.end(), rng);
  const mode_t old = ::umask(umask_value);
  fs::create_directories(root / "neo"); // an empty-ish kind first in some orders
  for (const auto& f : files) {
    fs::create_directories((root / f.path).parent_path());
    test::write_bytes(root / f.path, f.content);
    fs::permissions(root / f.path, f.executable ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::add);
    if (!f.executable) {
      fs::permissions(root / f.path, fs::perms::owner_exec, fs::perm_options::remove);
    }
    const auto when = fs::file_time_type::clock::now() - std::chrono::hours(rng() % 1000);
    fs::last_write_time(root / f.path, when);
  }
  ::umask(old);
}

SliceWriteOptions
fixed_options()
{
  SliceWriteOptions options;
  options.mtime = test::test_time();
  return options;
}

struct ArchivedEntry
{
  std::string name;
  unsigned type;
  unsigned perm;
  long long uid, gid, mtime;
  bool has_uname;
};

std::vector<ArchivedEntry>
list_archive(const fs::path& file)
{
  std::vector<ArchivedEntry> out;
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  archive_read_support_filter_zstd(a);
  EXPECT_EQ(archive_read_open_filename(a, file.c_str(), 65536), ARCHIVE_OK);
  archive_entry* e = nullptr;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    out.push_back({archive_entry_pathname(e), archive_entry_filetype(e), archive_entry_perm(e), archive_entry_uid(e),
                   archive_entry_gid(e), archive_entry_mtime(e), archive_entry_uname(e) != nullptr && *archive_entry_uname(e) != '\0'});
  }
  archive_read_free(a);
  return out;
}

class SliceWriterTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = TempDir::create("prewarm-test-");
    ASSERT_TRUE(dir);
    m_dir.emplace(std::move(*dir));
  }
  const fs::path& dir() const { return m_dir->path(); }
  std::optional<TempDir> m_dir;
};

TEST_F(SliceWriterTest, ReproducibleAcrossOrderMtimesAndUmask)
{
  make_tree(dir() / "one", k_tree, 1, 022);
  make_tree(dir() / "two", k_tree, 2, 077);
  const auto a = write_slice(dir() / "one", dir() / "one.tar.zst", fixed_options());
  ASSERT_TRUE(a) << a.error().message();
  const auto b = write_slice(dir() / "two", dir() / "two.tar.zst", fixed_options());
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(a->payload_sha256, b->payload_sha256);
  EXPECT_EQ(*read_file((dir() / "one.tar.zst").string()), *read_file((dir() / "two.tar.zst").string()));
  EXPECT_EQ(a->files, b->files);
  EXPECT_EQ(a->directories, b->directories);

  // A different time gives a different payload (the time is really used).
  auto later = fixed_options();
  later.mtime += std::chrono::seconds(1);
  const auto c = write_slice(dir() / "one", dir() / "three.tar.zst", later);
  ASSERT_TRUE(c);
  EXPECT_NE(c->payload_sha256, a->payload_sha256);
}

TEST_F(SliceWriterTest, WorkerCountDoesNotChangeOutput)
{
  make_tree(dir() / "t", k_tree, 1, 022);
  auto one = fixed_options();
  auto four = fixed_options();
  four.zstd_threads = 4;
  const auto a = write_slice(dir() / "t", dir() / "a.tar.zst", one);
  const auto b = write_slice(dir() / "t", dir() / "b.tar.zst", four);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->payload_sha256, b->payload_sha256);
}

TEST_F(SliceWriterTest, EntriesAreNormalized)
{
  make_tree(dir() / "t", k_tree, 3, 002);
  const auto written = write_slice(dir() / "t", dir() / "t.tar.zst", fixed_options());
  ASSERT_TRUE(written) << written.error().message();
  const auto entries = list_archive(dir() / "t.tar.zst");
  ASSERT_EQ(entries.size(), written->directories.size() + written->files.size());
  std::vector<std::string> names;
  for (const auto& e : entries) {
    EXPECT_TRUE(e.type == AE_IFREG || e.type == AE_IFDIR) << e.name;
    EXPECT_EQ(e.uid, 0);
    EXPECT_EQ(e.gid, 0);
    EXPECT_FALSE(e.has_uname) << e.name;
    EXPECT_EQ(e.mtime, test::test_time().time_since_epoch().count());
    EXPECT_TRUE(e.perm == 0644 || e.perm == 0755) << e.name << " " << e.perm;
    std::string name = e.name;
    if (e.type == AE_IFDIR) {
      EXPECT_TRUE(name.ends_with('/'));
      name.pop_back();
    }
    names.push_back(name);
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  const auto exe = std::find_if(written->files.begin(), written->files.end(),
                                [](const bundle::FileEntry& f) { return f.path == "programs/0123/prog.bin"; });
  ASSERT_NE(exe, written->files.end());
  EXPECT_EQ(exe->mode, 0755u);
  EXPECT_EQ(exe->sha256, sha256_hex("binary"));
  EXPECT_EQ(written->uncompressed_size, [] {
    std::uint64_t total = 0;
    for (const auto& f : k_tree) total += f.content.size();
    return total;
  }());
  EXPECT_EQ(written->directories.front(), "neo");
}

TEST_F(SliceWriterTest, RefusesWhatInstallWouldReject)
{
  const auto refused = [&](const std::string& name, auto&& plant) {
    const auto root = dir() / name;
    fs::create_directories(root / "pocl");
    test::write_bytes(root / "pocl" / "ok", "ok");
    plant(root);
    const auto r = write_slice(root, dir() / (name + ".tar.zst"), fixed_options());
    EXPECT_FALSE(r) << name;
    if (!r) {
      EXPECT_EQ(r.error().category(), Errc::usage) << r.error().message();
    }
    return r ? std::string() : r.error().message();
  };
  EXPECT_NE(refused("symlink", [](const fs::path& r) { fs::create_symlink("/etc/passwd", r / "pocl" / "link"); }).find("absolute target"), std::string::npos);
  EXPECT_NE(refused("escape", [](const fs::path& r) { fs::create_symlink("../../x", r / "pocl" / "link"); }).find("climbs out of"), std::string::npos);
  EXPECT_NE(refused("to-dir", [](const fs::path& r) {
              fs::create_directories(r / "pocl" / "d");
              fs::create_symlink("d", r / "pocl" / "link");
            }).find("which is a directory"), std::string::npos);
  EXPECT_NE(refused("to-link", [](const fs::path& r) {
              fs::create_symlink("ok", r / "pocl" / "first");
              fs::create_symlink("first", r / "pocl" / "second");
            }).find("which is another link"), std::string::npos);
  EXPECT_NE(refused("dangling", [](const fs::path& r) { fs::create_symlink("gone", r / "pocl" / "link"); }).find("which is nothing"), std::string::npos);
  EXPECT_NE(refused("fifo", [](const fs::path& r) { ASSERT_EQ(::mkfifo((r / "pocl" / "fifo").c_str(), 0644), 0); }).find("fifo"), std::string::npos);
  EXPECT_NE(refused("kind", [](const fs::path& r) { fs::create_directories(r / "vulkan"); }).find("vulkan"), std::string::npos);
  EXPECT_NE(refused("name", [](const fs::path& r) { test::write_bytes(r / "pocl" / "caf\xc3", "x"); }).find("printable UTF-8"), std::string::npos);
  EXPECT_NE(refused("control", [](const fs::path& r) { test::write_bytes(r / "pocl" / "a\x01", "x"); }).find("printable UTF-8"), std::string::npos);
  refused("toplevel-file", [](const fs::path& r) { test::write_bytes(r / "triton", "x"); });
  EXPECT_FALSE(write_slice(dir() / "missing", dir() / "missing.tar.zst", fixed_options()));
  fs::create_directories(dir() / "empty");
  EXPECT_FALSE(write_slice(dir() / "empty", dir() / "empty.tar.zst", fixed_options()));
}

// darktable's links and clFFT's device directory, archived as they are:
// names in the manifest's spelling, a link as a link entry.
TEST_F(SliceWriterTest, CarriesLinksAndPrintableNames)
{
  const auto root = dir() / "names";
  const auto device = root / "pocl" / "pthread-skylake-avx512-AMD EPYC";
  fs::create_directories(device);
  test::write_bytes(device / "fft (1).bin", "fft");
  test::write_bytes(root / "pocl" / "0123abcd", "binary");
  test::write_bytes(root / "pocl" / "caf\xc3\xa9", "utf");
  fs::create_symlink("0123abcd", root / "pocl" / "blur.cl.bin");
  fs::create_symlink("../0123abcd", device / "up");
  const auto written = write_slice(root, dir() / "names.tar.zst", fixed_options());
  ASSERT_TRUE(written) << written.error().message();
  EXPECT_EQ(written->links, (std::vector<bundle::LinkEntry>{{"pocl/blur.cl.bin", "0123abcd"},
                                                             {"pocl/pthread-skylake-avx512-AMD EPYC/up", "../0123abcd"}}));
  EXPECT_EQ(written->files.size(), 3u);
  EXPECT_NE(std::find(written->directories.begin(), written->directories.end(), "pocl/pthread-skylake-avx512-AMD EPYC"),
            written->directories.end());
  std::vector<std::string> names;
  for (const auto& e : list_archive(dir() / "names.tar.zst")) {
    names.push_back(e.name);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "pocl/pthread-skylake-avx512-AMD%20EPYC/fft%20%281%29.bin"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "pocl/caf%C3%A9"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "pocl/blur.cl.bin"), names.end());
}

TEST_F(SliceWriterTest, HardLinkedFilesBecomeIndependentCopies)
{
  const auto root = dir() / "links";
  fs::create_directories(root / "pocl");
  test::write_bytes(root / "pocl" / "a", "shared");
  fs::create_hard_link(root / "pocl" / "a", root / "pocl" / "b");
  const auto written = write_slice(root, dir() / "links.tar.zst", fixed_options());
  ASSERT_TRUE(written) << written.error().message();
  ASSERT_EQ(written->files.size(), 2u);
  for (const auto& e : list_archive(dir() / "links.tar.zst")) {
    EXPECT_TRUE(e.type == AE_IFREG || e.type == AE_IFDIR);
  }
}

TEST_F(SliceWriterTest, RefusesToOverwriteOutput)
{
  make_tree(dir() / "t", k_tree, 1, 022);
  test::write_bytes(dir() / "exists.tar.zst", "x");
  EXPECT_FALSE(write_slice(dir() / "t", dir() / "exists.tar.zst", fixed_options()));
}

TEST(ArchiveToolchain, DescribesVersionsAndLevel)
{
  const auto text = archive_toolchain_description(SliceWriteOptions{});
  EXPECT_NE(text.find("libarchive/3."), std::string::npos) << text;
  EXPECT_NE(text.find("zstd/1."), std::string::npos) << text;
  EXPECT_NE(text.find("level=3"), std::string::npos) << text;
}

} // namespace
} // namespace prewarm::pack
