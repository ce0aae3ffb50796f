// SPDX-License-Identifier: Apache-2.0
#include "builtin/child_process.hpp"

#include "base/files.hpp"

#include <gtest/gtest.h>

namespace prewarm::builtin {
namespace {

TEST(ChildProcess, RunsWithExactlyTheGivenEnvironmentAndLogsOutput)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo \"cache=$POCL_CACHE_DIR home=${HOME:-unset}\"; echo oops >&2; exit 3"};
  spec.environment = {{"POCL_CACHE_DIR", "/staging/pocl"}};
  spec.log_file = dir->path() / "job.log";
  auto result = run_child(spec);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->exit_status, 3);
  EXPECT_EQ(result->ending, process::Outcome::Ending::exited);
  EXPECT_EQ(result->describe(), "exited with status 3");
  EXPECT_EQ(file_tail(spec.log_file), "cache=/staging/pocl home=unset\noops\n");
  EXPECT_EQ(file_tail(spec.log_file, 5), "oops\n");
}

// An exit status is not a signal, whatever its value: a job that exits 130
// (a shell's status after its own child got SIGINT) exited.
TEST(ChildProcess, ExitStatusAbove128IsNotASignal)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "exit 130"};
  spec.log_file = dir->path() / "job.log";
  auto result = run_child(spec);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->describe(), "exited with status 130");
  EXPECT_FALSE(result->succeeded());
}

TEST(ChildProcess, KilledBySignalSaysWhich)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "kill -TERM $$"};
  spec.log_file = dir->path() / "job.log";
  auto result = run_child(spec);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->describe(), "killed by signal 15 (Terminated)");
}

TEST(ChildProcess, TimeoutKillsTheChild)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  ChildSpec spec;
  spec.argv = {"/bin/sleep", "30"};
  spec.log_file = dir->path() / "job.log";
  spec.timeout = std::chrono::seconds(1);
  auto result = run_child(spec);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->ending, process::Outcome::Ending::timed_out);
  EXPECT_LT(result->duration, std::chrono::seconds(10));
  EXPECT_EQ(result->describe(), "timed out");
}

TEST(ChildProcess, MissingProgramIsAnError)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  ChildSpec spec;
  spec.argv = {"/nonexistent/prewarm"};
  spec.log_file = dir->path() / "job.log";
  auto result = run_child(spec);
  // posix_spawn reports exec failures either as an error or as exit 127.
  if (result) {
    EXPECT_EQ(result->exit_status, 127);
  } else {
    EXPECT_EQ(result.error().category(), Errc::failed);
  }
}

} // namespace
} // namespace prewarm::builtin
