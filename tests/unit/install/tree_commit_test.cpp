// SPDX-License-Identifier: Apache-2.0
// Tree helpers on staged kinds: counts and install hygiene.
#include "install_test_support.hpp"

#include "install/tree_commit.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>

using namespace prewarm;
using namespace prewarm::test;

namespace {

struct Dirs
{
  TempDir dir = scratch();
  fs::path root = dir.path() / "root";
  fs::path staging = dir.path() / "staging";
  UniqueFd root_fd;
  UniqueFd staging_fd;

  Dirs(const Files& live, const Files& staged)
  {
    fs::create_directories(root);
    fs::create_directories(staging);
    write_tree(root, live);
    write_tree(staging, staged);
    root_fd.reset(::open(root.c_str(), O_RDONLY | O_DIRECTORY));
    staging_fd.reset(::open(staging.c_str(), O_RDONLY | O_DIRECTORY));
  }
};

} // namespace

TEST(CountTree, CountsFilesAndBytes)
{
  Dirs d({{"pocl/a", "12"}, {"pocl/b/c", "345"}}, {});
  auto counts = install::count_tree(d.root_fd.get(), "pocl");
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->files, 2u);
  EXPECT_EQ(counts->bytes, 5u);
  auto none = install::count_tree(d.root_fd.get(), "absent");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->files, 0u);
}
