// SPDX-License-Identifier: Apache-2.0
// The process core (process/run.hpp) with real programs from the base
// system: what its layers (host, command, build, aot) rely on and do not
// test through their own interfaces: the output cap, the stop request,
// output into a caller's file, start failures, the environment reader.
#include "base/files.hpp"
#include "process/command_line.hpp"
#include "process/environment.hpp"
#include "process/run.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <cerrno>

namespace prewarm::process {
namespace {

using namespace std::chrono_literals;

TEST(ProcessRun, OutputPastTheCapKillsTheChild)
{
  Spec spec;
  spec.argv = {"yes"};
  Supervision supervision;
  supervision.max_output = 100'000;
  supervision.timeout = 20s;
  const auto start = std::chrono::steady_clock::now();
  const auto outcome = run(spec, supervision);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->ending, Outcome::Ending::output_overflow);
  EXPECT_EQ(outcome->signal, SIGKILL);
  EXPECT_LE(outcome->output.size(), 100'000u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(ProcessRun, StopRequestKillsTheWholeGroup)
{
  Spec spec;
  spec.argv = {"sh", "-c", "sleep 30 & sleep 30; echo never"};
  Supervision supervision;
  std::atomic<int> polls{0};
  supervision.stop_requested = [&] { return ++polls > 3; };
  const auto outcome = run(spec, supervision);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->ending, Outcome::Ending::stopped);
  // The background sleep held the pipe: it was killed with the group, or
  // the bounded drain would have waited.
  EXPECT_LT(outcome->duration, 5s);
  EXPECT_EQ(outcome->output.find("never"), std::string::npos);
}

TEST(ProcessRun, OutputIntoTheCallersFileWithStderrDiscarded)
{
  auto dir = TempDir::create("prewarm-process-");
  ASSERT_TRUE(dir);
  const auto log = dir->path() / "log";
  UniqueFd fd(::open(log.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd);
  Spec spec;
  spec.argv = {"sh", "-c", "echo out; echo err >&2; pwd; exit 4"};
  spec.output_fd = fd.get();
  spec.stderr_to = StderrTo::null;
  spec.working_directory = dir->path();
  const auto outcome = run(spec, {});
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->ending, Outcome::Ending::exited);
  EXPECT_EQ(outcome->exit_status, 4);
  EXPECT_TRUE(outcome->output.empty());
  auto text = read_file(log.string(), 4096);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "out\n" + std::filesystem::canonical(dir->path()).string() + "\n");
}

TEST(ProcessRun, StandardInputAndStderrApartFromTheAnswer)
{
  auto dir = TempDir::create("prewarm-process-");
  ASSERT_TRUE(dir);
  const auto err = dir->path() / "err";
  UniqueFd fd(::open(err.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd);
  Spec spec;
  spec.argv = {"sh", "-c", "read line; echo \"got $line\"; echo warning >&2"};
  spec.standard_input = "reg.example\n";
  spec.stderr_to = StderrTo::descriptor;
  spec.stderr_fd = fd.get();
  const auto outcome = run(spec, {});
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->output, "got reg.example\n");
  auto text = read_file(err.string(), 4096);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "warning\n");

  spec.standard_input.assign(65537, 'x');
  const auto too_big = run(spec, {});
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().step, StartFailure::Step::standard_input);
}

TEST(ProcessRun, StartFailuresSayWhichStep)
{
  Spec missing;
  missing.argv = {"test_only_no_such_program"};
  const auto not_found = run(missing, {});
  ASSERT_FALSE(not_found);
  EXPECT_EQ(not_found.error().step, StartFailure::Step::exec);
  EXPECT_EQ(not_found.error().error_number, ENOENT);
  EXPECT_NE(not_found.error().describe(missing).find("test_only_no_such_program"), std::string::npos);

  Spec bad_dir;
  bad_dir.argv = {"true"};
  bad_dir.working_directory = "/nonexistent/test_only_dir";
  const auto no_dir = run(bad_dir, {});
  ASSERT_FALSE(no_dir);
  EXPECT_EQ(no_dir.error().step, StartFailure::Step::working_directory);
  EXPECT_NE(no_dir.error().describe(bad_dir).find("/nonexistent/test_only_dir"), std::string::npos);
}

TEST(ProcessRun, ExactlyTheGivenEnvironment)
{
  Spec spec;
  spec.argv = {"/usr/bin/env"};
  spec.environment = Environment{{"TEST_ONLY_A", "1"}, {"TEST_ONLY_B", "two words"}};
  const auto outcome = run(spec, {});
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->output, "TEST_ONLY_A=1\nTEST_ONLY_B=two words\n");
}

TEST(ProcessRun, InChildReturnsTheResultAndContainsACrash)
{
  const auto ok = run_in_child([] { return std::string(70'000, 'x'); }, {});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->ending, Outcome::Ending::exited);
  EXPECT_EQ(ok->output.size(), 70'000u);

  const auto crashed = run_in_child(
    []() -> std::string {
      ::raise(SIGABRT);
      return "unreached";
    },
    {});
  ASSERT_TRUE(crashed);
  EXPECT_EQ(crashed->ending, Outcome::Ending::signaled);
  EXPECT_EQ(crashed->signal, SIGABRT);
}

TEST(ProcessEnvironment, ReadsThisProcesssEnvironment)
{
  ::setenv("TEST_ONLY_PROCESS_VALUE", "a=b c", 1);
  const auto env = inherited_environment();
  ::unsetenv("TEST_ONLY_PROCESS_VALUE");
  const auto found = env.find("TEST_ONLY_PROCESS_VALUE");
  ASSERT_NE(found, env.end());
  EXPECT_EQ(found->second, "a=b c");
  EXPECT_EQ(environment_entries({{"B", "2"}, {"A", "1"}}), (std::vector<std::string>{"A=1", "B=2"}));
}

TEST(ProcessCommandLine, QuotesOnlyWhatAShellWouldSplit)
{
  EXPECT_EQ(quote_argv({"ocloc", "compile", "-file", "a b.cl", "it's", ""}),
            "ocloc compile -file 'a b.cl' 'it'\\''s' ''");
}

} // namespace
} // namespace prewarm::process
