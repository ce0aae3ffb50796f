// SPDX-License-Identifier: Apache-2.0
// Capturing at the install root (capture_root.hpp) with a stand-in for a
// cache whose key includes its own path, as Triton's does for Inductor's
// kernels: the shell program keys its entry by a hash of TRITON_CACHE_DIR and
// stores a Triton-like metadata JSON there. Captured in a work directory it
// misses where installed; captured at the root it hits there. Real programs
// on PoCL, through prewarm build / install / exec: tests/integration/command.
#include "command/capture_root.hpp"
#include "command/command_job.hpp"

#include "base/files.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace prewarm::command {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The entry's directory name depends on the cache's path: the same path hits,
// any other compiles anew.
constexpr const char* k_path_keyed_program =
  "k=$(printf %s \"$TRITON_CACHE_DIR\" | md5sum | cut -c1-16); d=\"$TRITON_CACHE_DIR/$k\"; "
  "if [ -f \"$d/add_kernel.json\" ]; then cat \"$d/add_kernel.json\" >/dev/null; "
  "else mkdir -p \"$d\" && printf '{\"name\": \"add_kernel\", \"dir\": \"%s\"}' \"$TRITON_CACHE_DIR\" > "
  "\"$d/add_kernel.json\"; fi";

struct Dirs
{
  TempDir scratch;
  fs::path work;
  fs::path root;
};

Dirs
make_dirs()
{
  auto scratch = TempDir::create("test_only_capture_root-");
  EXPECT_TRUE(scratch);
  auto work = scratch->path() / "work";
  fs::create_directory(work);
  auto root = scratch->path() / "opt" / "prewarm-root";
  return Dirs{std::move(*scratch), work, root};
}

CommandJobRequest
path_keyed_job(const Dirs& dirs, std::string program = k_path_keyed_program)
{
  CommandJobRequest request;
  request.job_id = "h100/test_only/bf16";
  request.precision = "bf16";
  request.work_dir = dirs.work;
  request.list_nvidia_gpus = [] { return std::vector<DeviceProperties>{}; };
  request.workload.argv = {std::move(program)};
  request.workload.shell = ShellMode::via_shell;
  request.workload.kinds = {CacheKind::triton};
  request.workload.verify = VerifyMode::warn;
  request.frameworks = FrameworkRequirements::recorded;
  return request;
}

bool
any_contains(const std::vector<std::string>& lines, std::string_view needle)
{
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

bool
is_empty_directory(const fs::path& dir)
{
  return fs::is_directory(dir) && fs::is_empty(dir);
}

TEST(CaptureRoot, APathKeyedCacheCapturedInTheWorkDirectoryMissesAndSaysWhy)
{
  auto dirs = make_dirs();
  auto result = run_command_job(path_keyed_job(dirs));
  ASSERT_TRUE(result) << result.error().describe();
  ASSERT_TRUE(result->succeeded()) << result->report();
  ASSERT_TRUE(result->hit_proof.has_value());
  EXPECT_FALSE(result->hit_proof->hit()) << result->hit_proof->line();
  EXPECT_TRUE(any_contains(result->hit_proof->causes, "build-time path")) << result->report();
}

TEST(CaptureRoot, APathKeyedCacheCapturedAtTheRootHitsThereAndTheRootIsGivenBack)
{
  auto dirs = make_dirs();
  auto request = path_keyed_job(dirs);
  request.capture_root = dirs.root;
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().describe();
  ASSERT_TRUE(result->succeeded()) << result->report();
  ASSERT_TRUE(result->hit_proof.has_value());
  EXPECT_TRUE(result->hit_proof->hit()) << result->report();
  EXPECT_EQ(result->hit_proof->line(), "triton: 1 reused, 0 new");
  EXPECT_FALSE(any_contains(result->warnings, "build-time path")) << result->report();

  // The capture lies in the work directory and names the root's path.
  EXPECT_EQ(result->staging_root, dirs.work / "staging");
  std::string text;
  for (const auto& entry : fs::recursive_directory_iterator(result->staging_root / "triton")) {
    if (entry.is_regular_file()) {
      text += *read_file(entry.path());
    }
  }
  EXPECT_NE(text.find("\"dir\": \"" + (dirs.root / "triton").string() + "\""), std::string::npos) << text;
  // Absent before, absent after: and so are the parents the claim created.
  EXPECT_FALSE(fs::exists(dirs.root));
  EXPECT_FALSE(fs::exists(dirs.root.parent_path()));
}

TEST(CaptureRoot, AnEmptyRootStaysAnEmptyDirectory)
{
  auto dirs = make_dirs();
  fs::create_directories(dirs.root);
  auto request = path_keyed_job(dirs);
  request.capture_root = dirs.root;
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().describe();
  EXPECT_TRUE(result->succeeded()) << result->report();
  EXPECT_TRUE(is_empty_directory(dirs.root));
}

TEST(CaptureRoot, ANonEmptyRootIsRefusedNamingWhatIsThereAndKeepsIt)
{
  auto dirs = make_dirs();
  fs::create_directories(dirs.root);
  std::ofstream(dirs.root / "precious.txt") << "user data";
  auto request = path_keyed_job(dirs);
  request.capture_root = dirs.root;
  auto result = run_command_job(request);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find(dirs.root.string()), std::string::npos) << result.error().message();
  EXPECT_NE(result.error().message().find("not empty (it holds \"precious.txt\")"), std::string::npos)
    << result.error().message();
  EXPECT_EQ(*read_file(dirs.root / "precious.txt"), "user data");
  EXPECT_FALSE(check_capture_root(dirs.root, "--capture-root"));
  EXPECT_FALSE(check_capture_root("relative/root", "--capture-root"));
  std::ofstream(dirs.scratch.path() / "file") << "x";
  EXPECT_FALSE(check_capture_root(dirs.scratch.path() / "file", "--capture-root"));
  EXPECT_TRUE(check_capture_root(dirs.scratch.path() / "absent", "--capture-root"));
}

// Two builds that both found PATH empty: the one that holds the claim's lock
// captures; the other is refused and touches nothing. (flock locks belong to
// an open file description, so a second claim in this process conflicts as a
// second process would.)
TEST(CaptureRoot, ASecondCaptureAtTheSameRootIsRefusedWhileTheFirstHoldsIt)
{
  auto dirs = make_dirs();
  {
    auto first = CaptureRootClaim::claim(dirs.root);
    ASSERT_TRUE(first) << first.error().describe();
    // Still empty: the check before the lock lets the second one through.
    auto second = CaptureRootClaim::claim(dirs.root);
    ASSERT_FALSE(second);
    EXPECT_NE(second.error().message().find("another prewarm build is capturing there"), std::string::npos)
      << second.error().message();
    EXPECT_TRUE(fs::is_directory(dirs.root)) << "the refused claim removed the first one's root";
  }
  EXPECT_FALSE(fs::exists(dirs.root)) << "the first claim created the root and gives it back";
  auto request = path_keyed_job(dirs);
  request.capture_root = dirs.root;
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().describe();
  EXPECT_TRUE(result->succeeded()) << result->report();
}

TEST(CaptureRoot, AFailingOrTimedOutCommandLeavesTheRootAsFound)
{
  for (const bool existed : {false, true}) {
    auto dirs = make_dirs();
    if (existed) {
      fs::create_directories(dirs.root);
    }
    auto failing = path_keyed_job(dirs, std::string(k_path_keyed_program) + "; exit 3");
    failing.capture_root = dirs.root;
    auto result = run_command_job(failing);
    ASSERT_TRUE(result) << result.error().describe();
    EXPECT_FALSE(result->succeeded());
    EXPECT_EQ(existed, is_empty_directory(dirs.root));
    EXPECT_EQ(existed, fs::exists(dirs.root));
    EXPECT_FALSE(fs::exists(dirs.work / "staging" / "triton")) << "a failed capture is not kept";

    fs::remove_all(dirs.work);
    fs::create_directory(dirs.work);
    auto slow = path_keyed_job(dirs, std::string(k_path_keyed_program) + "; sleep 30");
    slow.capture_root = dirs.root;
    slow.workload.timeout = 1s;
    result = run_command_job(slow);
    ASSERT_TRUE(result) << result.error().describe();
    EXPECT_EQ(result->run.ending, SubprocessResult::Ending::timed_out);
    EXPECT_EQ(existed, is_empty_directory(dirs.root));
    EXPECT_EQ(existed, fs::exists(dirs.root));
  }
}

} // namespace
} // namespace prewarm::command
