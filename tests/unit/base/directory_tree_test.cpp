// SPDX-License-Identifier: Apache-2.0
#include "base/directory_tree.hpp"
#include "base/files.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace prewarm {
namespace {

namespace fs = std::filesystem;

void
write(const fs::path& path, const std::string& bytes)
{
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// root/a/x, root/a/y/z, root/b (file), root/dirlink -> a, root/filelink -> b,
// and a directory outside the tree a link points at.
struct Tree
{
  TempDir dir;
  fs::path root;
};

Tree
make_tree()
{
  auto dir = TempDir::create();
  EXPECT_TRUE(dir);
  const auto root = dir->path() / "root";
  write(root / "a" / "x", "x");
  write(root / "a" / "y" / "z", "zz");
  write(root / "b", "bbb");
  write(dir->path() / "outside" / "secret", "s");
  fs::create_directory_symlink("a", root / "dirlink");
  fs::create_symlink("b", root / "filelink");
  fs::create_directory_symlink(dir->path() / "outside", root / "outlink");
  return Tree{std::move(*dir), root};
}

TEST(DirectoryTree, VisitsParentsFirstInSortedOrderAndReportsLinksAsLinks)
{
  const auto tree = make_tree();
  std::vector<std::string> seen;
  const auto walked = for_each_entry(tree.root, [&](const TreeEntry& entry) -> Result<WalkNext> {
    const char* type = entry.is_symlink()        ? "link"
                       : entry.is_directory()    ? "dir"
                       : entry.is_regular_file() ? "file"
                                                 : "?";
    seen.push_back(std::string(entry.relative) + ":" + type);
    return WalkNext::descend;
  });
  ASSERT_TRUE(walked) << walked.error().describe();
  // No "secret" and no "dirlink/x": a link is never followed.
  EXPECT_EQ(seen, (std::vector<std::string>{"a:dir", "a/x:file", "a/y:dir", "a/y/z:file", "b:file", "dirlink:link",
                                            "filelink:link", "outlink:link"}));
}

TEST(DirectoryTree, SkipLeavesADirectoryUnvisitedAndStopEndsTheWalk)
{
  const auto tree = make_tree();
  std::vector<std::string> seen;
  ASSERT_TRUE(for_each_entry(tree.root, [&](const TreeEntry& entry) -> Result<WalkNext> {
    seen.emplace_back(entry.relative);
    if (entry.relative == "a/y") {
      return WalkNext::skip;
    }
    return entry.relative == "b" ? WalkNext::stop : WalkNext::descend;
  }));
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "a/x", "a/y", "b"}));
}

TEST(DirectoryTree, AVisitorErrorEndsTheWalkWithIt)
{
  const auto tree = make_tree();
  int visits = 0;
  const auto walked = for_each_entry(tree.root, [&](const TreeEntry&) -> Result<WalkNext> {
    ++visits;
    return fail(Errc::usage, "no", "E_TEST");
  });
  ASSERT_FALSE(walked);
  EXPECT_EQ(walked.error().code(), "E_TEST");
  EXPECT_EQ(visits, 1);
}

TEST(DirectoryTree, RefusesASymlinkedOrMissingRoot)
{
  const auto tree = make_tree();
  const auto through_link =
    for_each_entry(tree.root / "dirlink", [](const TreeEntry&) -> Result<WalkNext> { return WalkNext::descend; });
  ASSERT_FALSE(through_link);
  EXPECT_EQ(through_link.error().code(), "E_TARGET_UNSAFE");
  const auto missing =
    for_each_entry(tree.root / "none", [](const TreeEntry&) -> Result<WalkNext> { return WalkNext::descend; });
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), "E_IO");
  EXPECT_NE(missing.error().message().find("none"), std::string::npos) << missing.error().message();
}

TEST(DirectoryTree, CountTreeCountsRegularFilesOnly)
{
  const auto tree = make_tree();
  UniqueFd parent(::open(tree.root.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(parent);
  const auto counts = count_tree(parent.get(), "root");
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->files, 3u);
  EXPECT_EQ(counts->bytes, 6u);
  const auto missing = count_tree(parent.get(), "none");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->files, 0u);
}

} // namespace
} // namespace prewarm
