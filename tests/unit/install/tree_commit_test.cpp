// SPDX-License-Identifier: Apache-2.0
// Commit mechanics on plain directories: rename, exchange, merge, undo.
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

TEST(CommitKind, AbsentTargetIsRenamedAndUndoMovesItBack)
{
  Dirs d({}, {{"pocl/a", "1"}});
  install::CommitJournal journal(d.root_fd.get(), d.staging_fd.get());
  auto commit = install::commit_kind(d.root_fd.get(), d.staging_fd.get(), "pocl",
                                     install::CommitStrategy::swap_directories, journal);
  ASSERT_TRUE(commit) << commit.error().message();
  EXPECT_EQ(commit->method, install::CommitMethod::renamed);
  EXPECT_TRUE(fs::exists(d.root / "pocl/a"));
  ASSERT_TRUE(journal.undo());
  EXPECT_FALSE(fs::exists(d.root / "pocl"));
  EXPECT_TRUE(fs::exists(d.staging / "pocl/a"));
}

TEST(CommitKind, PresentTargetIsExchangedAndUndoSwapsBack)
{
  Dirs d({{"pocl/old", "old"}}, {{"pocl/new", "new"}});
  const auto before = tree_hash(d.root);
  install::CommitJournal journal(d.root_fd.get(), d.staging_fd.get());
  auto commit = install::commit_kind(d.root_fd.get(), d.staging_fd.get(), "pocl",
                                     install::CommitStrategy::swap_directories, journal);
  ASSERT_TRUE(commit) << commit.error().message();
  EXPECT_EQ(commit->method, install::CommitMethod::exchanged);
  EXPECT_TRUE(fs::exists(d.root / "pocl/new"));
  EXPECT_TRUE(fs::exists(d.staging / "pocl/old")); // the old tree waits in staging
  ASSERT_TRUE(journal.undo());
  EXPECT_EQ(tree_hash(d.root), before);
}

TEST(CommitKind, MergeIntoAbsentTargetCreatesDirectoriesAndUndoRemovesThem)
{
  Dirs d({}, {{"neo/x/y/z.bin", "z"}, {"neo/top.bin", "t"}});
  install::CommitJournal journal(d.root_fd.get(), d.staging_fd.get());
  auto commit =
    install::commit_kind(d.root_fd.get(), d.staging_fd.get(), "neo", install::CommitStrategy::merge_files, journal);
  ASSERT_TRUE(commit) << commit.error().message();
  EXPECT_EQ(commit->files_moved, 2u);
  EXPECT_TRUE(fs::exists(d.root / "neo/x/y/z.bin"));
  EXPECT_TRUE(journal.touched_directories().contains("neo/x/y"));
  ASSERT_TRUE(journal.undo());
  EXPECT_FALSE(fs::exists(d.root / "neo"));
  EXPECT_TRUE(fs::exists(d.staging / "neo/x/y/z.bin"));
}

TEST(CommitKind, MergeRefusesASymlinkInTheLiveTree)
{
  Dirs d({{"elsewhere/keep", "k"}}, {{"neo/x/file", "f"}});
  fs::create_directories(d.root / "neo");
  fs::create_directory_symlink(d.root / "elsewhere", d.root / "neo/x");
  install::CommitJournal journal(d.root_fd.get(), d.staging_fd.get());
  auto commit =
    install::commit_kind(d.root_fd.get(), d.staging_fd.get(), "neo", install::CommitStrategy::merge_files, journal);
  ASSERT_FALSE(commit);
  EXPECT_EQ(commit.error().code(), "E_TARGET_UNSAFE");
  EXPECT_FALSE(fs::exists(d.root / "elsewhere/file"));
  EXPECT_TRUE(journal.empty());
}

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
