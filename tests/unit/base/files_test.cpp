// SPDX-License-Identifier: Apache-2.0
#include "base/files.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace prewarm {
namespace {

TEST(Files, AtomicWriteReplacesContentAndSetsMode)
{
  auto dir = TempDir::create();
  ASSERT_TRUE(dir);
  const auto path = dir->path() / "f";
  ASSERT_TRUE(write_file_atomic(path, "one", 0600));
  ASSERT_TRUE(write_file_atomic(path, "two", 0644));
  EXPECT_EQ(*read_file(path), "two");
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  // No temporary file is left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir->path())) {
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(Files, ReadRefusesSymlinksAndOversizedFiles)
{
  auto dir = TempDir::create();
  ASSERT_TRUE(dir);
  const auto target = dir->path() / "target";
  ASSERT_TRUE(write_file_atomic(target, std::string(100, 'x')));
  const auto link = dir->path() / "link";
  std::filesystem::create_symlink(target, link);
  const auto via_link = read_file(link);
  ASSERT_FALSE(via_link);
  EXPECT_EQ(via_link.error().code(), "E_NOT_REGULAR");
  const auto too_big = read_file(target, 99);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code(), "E_LIMIT");
  EXPECT_EQ(read_file(target, 100)->size(), 100u);
}

TEST(Files, ReadsProcFilesWhoseSizeIsZero)
{
  // /proc reports st_size 0; the content must still be read.
  const auto status = read_file("/proc/self/status");
  ASSERT_TRUE(status) << status.error().message();
  EXPECT_NE(status->find("Name:"), std::string::npos);
}

TEST(Files, TempDirRemovesItsTree)
{
  std::filesystem::path kept;
  {
    auto dir = TempDir::create();
    ASSERT_TRUE(dir);
    kept = dir->path();
    std::filesystem::create_directories(kept / "a" / "b");
    std::ofstream(kept / "a" / "b" / "c") << "x";
    EXPECT_TRUE(std::filesystem::exists(kept / "a" / "b" / "c"));
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

TEST(Files, FifoOrDeviceIsRefusedWithoutBlocking)
{
  auto dir = TempDir::create();
  ASSERT_TRUE(dir);
  const auto fifo = dir->path() / "manifest";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  // Without O_NONBLOCK this open waits forever for a writer.
  auto read = read_file(fifo);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), "E_NOT_REGULAR");
  EXPECT_NE(read.error().message().find("a FIFO"), std::string::npos) << read.error().message();
  auto device = open_regular_file("/dev/null");
  ASSERT_FALSE(device);
  EXPECT_NE(device.error().message().find("a character device"), std::string::npos) << device.error().message();
  auto directory = read_input_file(dir->path().string(), 100);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().category(), Errc::usage) << "a person's input: exit 2";
  EXPECT_NE(directory.error().message().find("a directory"), std::string::npos);
}

TEST(Files, RemoveTreeDoesNotFollowSymlinks)
{
  auto outside = TempDir::create();
  auto dir = TempDir::create();
  ASSERT_TRUE(outside && dir);
  ASSERT_TRUE(write_file_atomic(outside->path() / "keep", "precious"));
  std::filesystem::create_symlink(outside->path(), dir->path() / "escape");
  ASSERT_TRUE(remove_tree(dir->path()));
  EXPECT_EQ(*read_file(outside->path() / "keep"), "precious");
}

} // namespace
} // namespace prewarm
