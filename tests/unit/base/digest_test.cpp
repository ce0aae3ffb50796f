// SPDX-License-Identifier: Apache-2.0
#include "base/digest.hpp"
#include "base/files.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>

namespace prewarm {
namespace {

TEST(Sha256, MatchesFipsVectors)
{
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, StreamingEqualsOneShot)
{
  Sha256 h;
  h.update("a");
  h.update("bc");
  EXPECT_EQ(h.finish_hex(), sha256_hex("abc"));
}

TEST(Sha256, FileDigestAndShortFileDetected)
{
  auto dir = TempDir::create();
  ASSERT_TRUE(dir);
  const auto path = dir->path() / "f";
  ASSERT_TRUE(write_file_atomic(path, "abc"));
  EXPECT_EQ(*sha256_hex_of_file(path), sha256_hex("abc"));
  auto fd = open_regular_file(path);
  ASSERT_TRUE(fd);
  const auto longer = sha256_hex_of_fd(fd->get(), 4); // claims 4 bytes, file has 3
  ASSERT_FALSE(longer);
  EXPECT_EQ(longer.error().code(), "E_PAYLOAD_SIZE");
}

} // namespace
} // namespace prewarm
