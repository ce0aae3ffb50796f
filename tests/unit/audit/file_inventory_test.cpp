// SPDX-License-Identifier: Apache-2.0
#include "audit/file_inventory.hpp"

#include "audit_scratch.hpp"

#include <gtest/gtest.h>

#include <chrono>
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
  EXPECT_FALSE(parse_inventory("prewarm-files 4\n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 2\npocl a\n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 2\npocl 1 2 - \n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 2\npocl x 2 - a\n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 2\npocl 1 2 abc a\n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 1\npocl\n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 1\n a\n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 1\npocl \n").has_value());
  EXPECT_FALSE(parse_inventory("prewarm-files 1\npocl a").has_value());
}

TEST(FileInventory, StatesRoundTripWithSpacesInPaths)
{
  const Inventory inventory{{"custom", {"clfft/AMD EPYC/fft (1).bin", "x"}}, {"pocl", {"ab/k.so"}}};
  const InventoryStates states{
    {"custom", {{"clfft/AMD EPYC/fft (1).bin", {3, 1700000000123456789, std::string(64, 'a')}}, {"x", {0, 5, ""}}}},
    {"pocl", {{"ab/k.so", {7, -1, std::string(64, 'f')}}}}};
  const auto text = serialize(inventory, &states);
  EXPECT_TRUE(text.starts_with("prewarm-files 3\n")) << text;
  InventoryStates parsed_states;
  const auto parsed = parse_inventory(text, &parsed_states);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(*parsed, inventory);
  EXPECT_EQ(parsed_states, states);
}

TEST(FileInventory, OldFormatHasNoStates)
{
  InventoryStates states;
  const auto parsed = parse_inventory("prewarm-files 1\npocl ab/k.so\n", &states);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(*parsed, (Inventory{{"pocl", {"ab/k.so"}}}));
  EXPECT_TRUE(states.empty());
}

// An install's state (settled): the same file is unchanged without
// hashing; the same bytes written again (mtime moved), other bytes, or the
// file unlinked and created again (another inode) are a change.
TEST(FileInventory, SettledStateIsTheSameFileOrAChange)
{
  Scratch s;
  write_file(s.dir / "a/k.bin", "kernel");
  const auto installed = snapshot_one(s.dir, "a/k.bin");
  ASSERT_TRUE(installed) << installed.error().message();
  EXPECT_FALSE(installed->sha256.empty());
  EXPECT_NE(installed->inode, 0u);
  EXPECT_FALSE(file_changed(s.dir, "a/k.bin", *installed, true));

  const auto later = [&] {
    fs::last_write_time(s.dir / "a/k.bin", fs::last_write_time(s.dir / "a/k.bin") + std::chrono::seconds(5));
  };
  write_file(s.dir / "a/k.bin", "kernel");
  later();
  EXPECT_TRUE(file_changed(s.dir, "a/k.bin", *installed, true)) << "rewritten with the same bytes";
  write_file(s.dir / "a/k.bin", "kernel!");
  EXPECT_TRUE(file_changed(s.dir, "a/k.bin", *installed, true));
}

// Another inode with the same size and mtime: against a run's start state a
// change (a rewrite can share the mtime tick); against an install's state
// (settled, with the digest the install recorded) the digest tells a root
// copied with its times from other bytes, also where the copy kept whole
// seconds only.
TEST(FileInventory, AnotherInodeIsAChangeUnlessTheInstallsDigestSaysCopied)
{
  Scratch s;
  write_file(s.dir / "a/k.bin", "kernel");
  const auto installed = snapshot_one(s.dir, "a/k.bin");
  ASSERT_TRUE(installed) << installed.error().message();
  const auto mtime = fs::last_write_time(s.dir / "a/k.bin");
  fs::rename(s.dir / "a/k.bin", s.dir / "a/old.bin"); // keeps the old inode in use
  write_file(s.dir / "a/k.bin", "kernel");
  fs::last_write_time(s.dir / "a/k.bin", mtime);
  EXPECT_FALSE(file_changed(s.dir, "a/k.bin", *installed, true)) << "copied with its times";
  EXPECT_TRUE(file_changed(s.dir, "a/k.bin", *installed, false));
  auto undigested = *installed;
  undigested.sha256.clear();
  EXPECT_TRUE(file_changed(s.dir, "a/k.bin", undigested, true)) << "no digest: only the inode tells";
  auto without_inode = *installed; // a format 2 list
  without_inode.inode = 0;
  EXPECT_FALSE(file_changed(s.dir, "a/k.bin", without_inode, true));

  // The install's mtime had a fraction; the copy kept whole seconds.
  const auto fraction = std::chrono::nanoseconds(installed->mtime_ns % 1'000'000'000);
  auto fractional = *installed;
  fractional.mtime_ns += fraction.count() == 0 ? 250'000'000 : 0;
  fs::last_write_time(s.dir / "a/k.bin", mtime - fraction);
  EXPECT_FALSE(file_changed(s.dir, "a/k.bin", fractional, true)) << "whole seconds kept";
  EXPECT_TRUE(file_changed(s.dir, "a/k.bin", fractional, false));

  write_file(s.dir / "a/k.bin", "KERNEL"); // same size, other bytes
  fs::last_write_time(s.dir / "a/k.bin", mtime);
  EXPECT_TRUE(file_changed(s.dir, "a/k.bin", *installed, true)) << "other bytes";
}

TEST(FileInventory, Format3RecordsInodesAndFormat2StillReads)
{
  Inventory inventory{{"pocl", {"ab/k.so"}}};
  InventoryStates states{{"pocl", {{"ab/k.so", FileState{3, 4, "", 1234}}}}};
  const auto text = serialize(inventory, &states);
  EXPECT_EQ(text, "prewarm-files 3\npocl 3 4 1234 - ab/k.so\n");
  InventoryStates read;
  ASSERT_TRUE(parse_inventory(text, &read));
  EXPECT_EQ(read, states);
  InventoryStates old;
  ASSERT_TRUE(parse_inventory("prewarm-files 2\npocl 3 4 - ab/k.so\n", &old));
  EXPECT_EQ(old.at("pocl").at("ab/k.so").inode, 0u);
  EXPECT_EQ(old.at("pocl").at("ab/k.so").size, 3u);
}
