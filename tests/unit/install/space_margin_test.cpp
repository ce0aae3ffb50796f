// SPDX-License-Identifier: Apache-2.0
// The free space an install keeps beyond its caches (install/space_margin.hpp):
// proportional with a floor, settable, and a refusal that says what would fit.
#include "install/space_margin.hpp"

#include "install_test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <string>

using namespace prewarm;
using namespace prewarm::install;

TEST(SpaceMargin, ProportionalWithAFloor)
{
  const SpaceMargin margin;
  EXPECT_EQ(margin.of(0), SpaceMargin::k_floor_bytes);
  // The case: a 4.5 MB cache on a 6 MiB volume needed 21791325 bytes
  // with the fixed 16 MiB margin; 10% of it is below the floor.
  EXPECT_EQ(margin.of(4'500'000), SpaceMargin::k_floor_bytes);
  EXPECT_LE(4'500'000 + margin.of(4'500'000), std::uint64_t{6} << 20);
  EXPECT_EQ(margin.of(std::uint64_t{10} << 30), std::uint64_t{1} << 30);
  EXPECT_EQ(SpaceMargin::bytes(0).of(std::uint64_t{10} << 30), 0u);
}

TEST(SpaceMargin, ParsesSizesAndPercentages)
{
  EXPECT_EQ(parse_space_margin("0")->of(1 << 30), 0u);
  EXPECT_EQ(parse_space_margin("4096")->of(1 << 30), 4096u);
  EXPECT_EQ(parse_space_margin("512K")->of(1 << 30), 512u << 10);
  EXPECT_EQ(parse_space_margin("8M")->of(1 << 30), 8u << 20);
  EXPECT_EQ(parse_space_margin("1G")->of(0), 1u << 30);
  EXPECT_EQ(parse_space_margin("25%")->of(std::uint64_t{400} << 20), std::uint64_t{100} << 20);
  EXPECT_EQ(parse_space_margin("25%")->of(100), SpaceMargin::k_floor_bytes) << "a percentage keeps the floor";
  for (const char* bad : {"", "M", "-1", "8MB", "1.5M", "2000%", "99999999999999999999G"}) {
    const auto parsed = parse_space_margin(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().category(), Errc::usage);
  }
}

TEST(SpaceMargin, ARefusalSaysWhatWouldFit)
{
  auto dir = test::scratch();
  const int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  struct statvfs vfs
  {};
  ASSERT_EQ(::fstatvfs(fd, &vfs), 0);
  const std::uint64_t free_bytes = std::uint64_t{vfs.f_bavail} * vfs.f_frsize;
  ASSERT_GT(free_bytes, 1u << 20);
  // The caches fit, the margin does not: the largest margin that would fit.
  const auto refused = check_free_space(fd, dir.path(), 4096, SpaceMargin::bytes(std::uint64_t{1} << 62));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), "E_NOSPC");
  const auto& message = refused.error().message();
  EXPECT_NE(message.find("caches 4096 + margin"), std::string::npos) << message;
  const auto at = message.find("--space-margin ");
  ASSERT_NE(at, std::string::npos) << message;
  const auto suggested = std::stoull(message.substr(at + 15));
  EXPECT_TRUE(check_free_space(fd, dir.path(), 4096, SpaceMargin::bytes(suggested / 2)))
    << "half the margin it names fits";
  // The caches alone do not fit: how much they lack.
  const auto too_big = check_free_space(fd, dir.path(), std::uint64_t{1} << 62, SpaceMargin::bytes(0));
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.error().message().find("the caches alone need"), std::string::npos) << too_big.error().message();
  ::close(fd);
}
