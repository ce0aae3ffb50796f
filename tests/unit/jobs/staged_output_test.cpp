// SPDX-License-Identifier: Apache-2.0
#include "jobs/staged_output.hpp"

#include "base/files.hpp"
#include "jobs/staged_kind.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace prewarm::jobs {
namespace {

namespace fs = std::filesystem;

// Files below `root`, "relative/path" -> bytes, their directories made.
void
make_files(const fs::path& root, std::initializer_list<std::pair<std::string_view, std::string_view>> files)
{
  for (const auto& [relative, bytes] : files) {
    const auto path = root / relative;
    fs::create_directories(path.parent_path());
    ASSERT_TRUE(write_file_atomic(path, bytes));
  }
}

TempDir
scratch()
{
  auto dir = TempDir::create();
  EXPECT_TRUE(dir);
  return std::move(*dir);
}

TEST(StagedOutput, CreateMakesKindDirectoriesAndRefusesAnExistingOneWhenAsked)
{
  const auto dir = scratch();
  const auto staging = dir.path() / "staging";
  const CacheKind kinds[] = {CacheKind::pocl, CacheKind::programs};
  ASSERT_TRUE(create_staged_kinds(staging, kinds, ExistingKindDirectory::refuse));
  EXPECT_TRUE(fs::is_directory(staging / "pocl"));
  EXPECT_TRUE(fs::is_directory(staging / "programs"));
  EXPECT_TRUE(create_staged_kinds(staging, kinds, ExistingKindDirectory::keep));
  const auto again = create_staged_kinds(staging, kinds, ExistingKindDirectory::refuse);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message().find("it exists already"), std::string::npos) << again.error().message();
}

TEST(StagedOutput, CountSeesRegularFilesAndNotWhatALinkPointsAt)
{
  const auto dir = scratch();
  const auto root = dir.path() / "pocl";
  make_files(root, {{"k/a.bin", "1234"}});
  make_files(dir.path(), {{"elsewhere/big", std::string(1000, 'x')}});
  fs::create_directory_symlink(dir.path() / "elsewhere", root / "k" / "out");
  fs::create_symlink("a.bin", root / "k" / "alias");
  const auto counts = count_staged_files(root);
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->files, 1u);
  EXPECT_EQ(counts->bytes, 4u);
  EXPECT_FALSE(count_staged_files(dir.path() / "missing"));
}

TEST(StagedOutput, CleanKeepsAnInnerLinkRefusesAnEscapingOneAndRemovesBookkeeping)
{
  const auto dir = scratch();
  const auto root = dir.path() / "pocl";
  make_files(root, {{"k/program.bin", "p"}, {"k/lock", "l"}});
  make_files(dir.path(), {{"elsewhere/f", "f"}});
  fs::create_symlink("program.bin", root / "k" / "inner");
  fs::create_directory_symlink(dir.path() / "elsewhere", root / "escape");
  const auto cleaned = clean_staged_tree("pocl", root, [](std::string_view name) { return name == "lock"; });
  ASSERT_TRUE(cleaned) << cleaned.error().describe();
  EXPECT_EQ(cleaned->bookkeeping_removed, 1u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(root / "k" / "lock")));
  // A link to a file of the same cache ships as a link; one leading out of
  // the cache cannot, and is named.
  ASSERT_EQ(cleaned->refusals.size(), 1u);
  EXPECT_NE(cleaned->refusals[0].find("\"escape\""), std::string::npos) << cleaned->refusals[0];
  EXPECT_TRUE(fs::is_symlink(root / "k" / "inner"));
  // Never followed: what the escaping link points at is intact.
  EXPECT_TRUE(fs::exists(dir.path() / "elsewhere" / "f"));
}

TEST(StagedOutput, CleanRefusesPathsOverTheSliceLimitsWhenTheJobEnds)
{
  const auto dir = scratch();
  const auto root = dir.path() / "pocl";
  // 33 components below the kind: one over bundle::k_max_path_depth.
  std::string deep;
  for (int i = 0; i < 32; ++i) {
    deep += "d/";
  }
  deep += "too-deep";
  // "pocl/" + 5 components of 250 bytes: over bundle::k_max_path_length,
  // already at its fifth directory.
  std::string long_path;
  for (int i = 0; i < 5; ++i) {
    long_path += std::string(250, static_cast<char>('a' + i)) + "/";
  }
  long_path += "f";
  make_files(root, {{"ok/fine", "f"}, {deep, "x"}, {long_path, "y"}});
  const auto cleaned = clean_staged_tree("pocl", root, nullptr);
  ASSERT_TRUE(cleaned) << cleaned.error().describe();
  ASSERT_EQ(cleaned->refusals.size(), 2u);
  // Sorted walk: the long path ("aaa...") first, named at its first
  // directory over the limit (nothing below it is looked at), then the file
  // that is too deep; each with the rule.
  const auto long_dir = long_path.substr(0, 5 * 251 - 1);
  EXPECT_NE(cleaned->refusals[0].find("pocl: \"" + long_dir + "\" cannot ship: path \"pocl/" + long_dir +
                                      "\": 1259 bytes long (at most 1024)"),
            std::string::npos)
    << cleaned->refusals[0];
  EXPECT_NE(cleaned->refusals[1].find("pocl: \"" + deep + "\" cannot ship: "), std::string::npos)
    << cleaned->refusals[1];
  EXPECT_NE(cleaned->refusals[1].find("33 components deep (at most 32)"), std::string::npos) << cleaned->refusals[1];
  // A custom cache's name counts towards both limits, as in the slice.
  const auto custom = dir.path() / "custom";
  make_files(custom, {{deep.substr(2), "z"}});
  const auto custom_cleaned = clean_staged_tree("custom/clfft", custom, nullptr);
  ASSERT_TRUE(custom_cleaned) << custom_cleaned.error().describe();
  ASSERT_EQ(custom_cleaned->refusals.size(), 1u);
  EXPECT_NE(custom_cleaned->refusals[0].find("custom cache clfft: "), std::string::npos)
    << custom_cleaned->refusals[0];
  EXPECT_NE(custom_cleaned->refusals[0].find("33 components deep"), std::string::npos) << custom_cleaned->refusals[0];
}

TEST(StagedOutput, PruneRemovesKindsLeftEmptyAndCountsTheRest)
{
  const auto dir = scratch();
  const auto staging = dir.path() / "staging";
  make_files(staging, {{"pocl/k/a", "a"}, {"pocl/k/b", "b"}});
  fs::create_directories(staging / "programs" / "empty");
  make_files(staging, {{"stray", "s"}});
  const auto files = prune_empty_kinds(staging);
  ASSERT_TRUE(files) << files.error().describe();
  EXPECT_EQ(*files, 2u);
  EXPECT_TRUE(fs::exists(staging / "pocl" / "k" / "a"));
  EXPECT_FALSE(fs::exists(staging / "programs"));
  EXPECT_FALSE(fs::exists(staging / "stray"));
}

TEST(StagedOutput, MergeKeepsTheFirstCopyAndCountsDifferingBytes)
{
  const auto dir = scratch();
  const auto slice = dir.path() / "slice";
  make_files(dir.path(), {{"job1/pocl/k/a", "first"},
                          {"job1/pocl/k/same", "same"},
                          {"job2/pocl/k/a", "second"},
                          {"job2/pocl/k/same", "same"},
                          {"job2/pocl/j/new", "new"}});
  const auto first = merge_staged_tree(dir.path() / "job1", slice, "job1");
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_EQ(*first, 0u);
  const auto second = merge_staged_tree(dir.path() / "job2", slice, "job2");
  ASSERT_TRUE(second) << second.error().describe();
  EXPECT_EQ(*second, 1u);
  EXPECT_EQ(*read_file((slice / "pocl" / "k" / "a").string()), "first");
  EXPECT_EQ(*read_file((slice / "pocl" / "j" / "new").string()), "new");
}

TEST(StagedOutput, MergeCopiesALinkAsALinkInsteadOfFollowingIt)
{
  const auto dir = scratch();
  make_files(dir.path(), {{"elsewhere/f", "f"}, {"job/pocl/a", "a"}});
  fs::create_symlink("a", dir.path() / "job" / "pocl" / "alias");
  fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "job" / "pocl" / "dir-link");
  const auto merged = merge_staged_tree(dir.path() / "job", dir.path() / "slice", "job");
  ASSERT_TRUE(merged) << merged.error().describe();
  const auto slice = dir.path() / "slice" / "pocl";
  ASSERT_TRUE(fs::is_symlink(slice / "alias"));
  EXPECT_EQ(fs::read_symlink(slice / "alias"), fs::path("a"));
  // Copied as the link it is, never as what it points at.
  ASSERT_TRUE(fs::is_symlink(slice / "dir-link"));
  EXPECT_EQ(fs::read_symlink(slice / "dir-link"), dir.path() / "elsewhere");
}

// The one copy every hit proof reads: links stay links (as the slice keeps
// them), the destination is made, and a file already there is replaced.
TEST(StagedOutput, TheProofCopyKeepsLinksAsLinksAndLeavesTheStagingAlone)
{
  const auto dir = scratch();
  make_files(dir.path(), {{"staged/neo/ab/entry.cl_cache", "binary"}, {"proof/neo/ab/entry.cl_cache", "stale"}});
  fs::create_symlink("entry.cl_cache", dir.path() / "staged" / "neo" / "ab" / "alias");
  ASSERT_TRUE(copy_for_proof(dir.path() / "staged" / "neo", dir.path() / "proof" / "neo"));
  const auto copy = dir.path() / "proof" / "neo" / "ab";
  EXPECT_EQ(read_file((copy / "entry.cl_cache").string(), 64).value_or(""), "binary");
  ASSERT_TRUE(fs::is_symlink(copy / "alias")) << "a link inside the cache is copied as the link";
  EXPECT_EQ(fs::read_symlink(copy / "alias"), fs::path("entry.cl_cache"));
  ASSERT_TRUE(copy_for_proof(dir.path() / "staged" / "neo", dir.path() / "fresh" / "deep" / "neo"));
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "fresh" / "deep" / "neo" / "ab" / "entry.cl_cache"));
  EXPECT_EQ(read_file((dir.path() / "staged" / "neo" / "ab" / "entry.cl_cache").string(), 64).value_or(""), "binary");
  EXPECT_FALSE(copy_for_proof(dir.path() / "missing", dir.path() / "proof" / "x")) << "a copy that fails says so";
}

} // namespace
} // namespace prewarm::jobs
