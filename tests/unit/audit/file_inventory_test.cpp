// SPDX-License-Identifier: Apache-2.0
#include "audit/file_inventory.hpp"

#include "audit_scratch.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace prewarm::audit;
using prewarm::audit::testing::Scratch;
using prewarm::audit::testing::write_file;


TEST(FileInventory, ListsRegularFilesRelativeAndSkipsLinks)
{
  Scratch s;
  write_file(s.dir / "ab/cdef/program.bc", "x");
  write_file(s.dir / "top", "x");
  fs::create_symlink(s.dir / "top", s.dir / "link");
  const auto files = list_files(s.dir);
  ASSERT_TRUE(files.has_value());
  EXPECT_EQ(*files, (FileSet{"ab/cdef/program.bc", "top"}));
}

TEST(FileInventory, MissingDirectoryIsEmpty)
{
  const auto files = list_files("/nonexistent/prewarm-audit");
  ASSERT_TRUE(files.has_value());
  EXPECT_TRUE(files->empty());
}

TEST(FileInventory, RoundTrips)
{
  Inventory inventory{{"pocl", {"ab/cd/program.bc", "ab/cd/k/1-1-1/k.so"}}, {"triton", {"H/add.json"}}};
  const auto parsed = parse_inventory(serialize(inventory));
  ASSERT_TRUE(parsed.has_value()) << parsed.error().describe();
  EXPECT_EQ(*parsed, inventory);
}

TEST(FileInventory, PathsMayHoldSpaces)
{
  // clFFT's device directory: the kind ends at the first space, the path
  // takes the rest of the line.
  const Inventory inventory{{"custom", {"clfft/pthread-skylake-avx512-AMD EPYC/fft (1).bin"}}};
  const auto parsed = parse_inventory(serialize(inventory));
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(*parsed, inventory);
}

TEST(FileInventory, RejectsDamage)
{
  EXPECT_FALSE(parse_inventory("").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 2\n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 1\npocl\n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 1\n a\n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 1\npocl \n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 1\npocl a").has_value());
}
