// SPDX-License-Identifier: Apache-2.0
#include "command/subprocess.hpp"

#include "base/files.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace prewarm::command {
namespace {

using namespace std::chrono_literals;

SubprocessSpec
spec_for(std::vector<std::string> argv)
{
  SubprocessSpec spec;
  spec.argv = std::move(argv);
  spec.environment = {{"PATH", "/usr/bin:/bin"}};
  return spec;
}

// Running or sleeping; a killed process whose parent died may linger as a
// zombie until init reaps it, which counts as gone.
bool
process_alive(pid_t pid)
{
  // /proc files report size 0, so read them as streams.
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z' &&
         stat[paren + 2] != 'X';
}

TEST(Subprocess, ReportsExitStatusAndOutput)
{
  auto run = run_subprocess(spec_for({"sh", "-c", "echo out; echo err >&2; exit 3"}));
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->ending, SubprocessResult::Ending::exited);
  EXPECT_EQ(run->exit_status, 3);
  EXPECT_FALSE(run->succeeded());
  EXPECT_NE(run->output_tail.find("out\n"), std::string::npos);
  EXPECT_NE(run->output_tail.find("err\n"), std::string::npos);
  EXPECT_EQ(run->describe(), "exited with status 3");
}

TEST(Subprocess, ArgvElementsAreNotReparsedByAShell)
{
  auto dir = TempDir::create("test_only_subprocess-");
  ASSERT_TRUE(dir);
  const auto marker = dir->path() / "injected";
  // If anything ran this through a shell, the command substitution would
  // create the marker file.
  const std::string hostile = "$(touch " + marker.string() + "); `touch " + marker.string() + "` ; *";
  auto spec = spec_for({"printf", "%s", hostile});
  spec.working_directory = dir->path();
  auto run = run_subprocess(spec);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_TRUE(run->succeeded());
  EXPECT_EQ(run->output_tail, hostile);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(Subprocess, ShellModeRunsOneStringThroughSh)
{
  auto spec = spec_for({"echo a | tr a b"});
  spec.shell = ShellMode::via_shell;
  auto run = run_subprocess(spec);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->output_tail, "b\n");
}

TEST(Subprocess, ChildSeesExactlyTheGivenEnvironmentAndDirectory)
{
  auto dir = TempDir::create("test_only_subprocess-");
  ASSERT_TRUE(dir);
  auto spec = spec_for({"sh", "-c", "env | sort; pwd"});
  spec.environment["TEST_ONLY_VALUE"] = "with space and 'quote'";
  spec.working_directory = dir->path();
  ::setenv("TEST_ONLY_PARENT_ONLY", "1", 1);
  auto run = run_subprocess(spec);
  ::unsetenv("TEST_ONLY_PARENT_ONLY");
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_NE(run->output_tail.find("TEST_ONLY_VALUE=with space and 'quote'\n"), std::string::npos);
  EXPECT_EQ(run->output_tail.find("TEST_ONLY_PARENT_ONLY"), std::string::npos);
  EXPECT_NE(run->output_tail.find(std::filesystem::canonical(dir->path()).string() + "\n"), std::string::npos);
}

TEST(Subprocess, ProgramIsLookedUpInTheChildsPath)
{
  auto dir = TempDir::create("test_only_subprocess-");
  ASSERT_TRUE(dir);
  const auto tool = dir->path() / "test_only_tool";
  ASSERT_TRUE(write_file_atomic(tool, "#!/bin/sh\necho from-tool\n", 0755));
  auto spec = spec_for({"test_only_tool"});
  spec.environment["PATH"] = dir->path().string() + ":/usr/bin:/bin";
  auto run = run_subprocess(spec);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->output_tail, "from-tool\n");
}

TEST(Subprocess, MissingProgramOrDirectoryIsAnErrorNamingIt)
{
  auto missing = run_subprocess(spec_for({"test_only_no_such_program"}));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("test_only_no_such_program"), std::string::npos);
  EXPECT_NE(missing.error().message().find("No such file"), std::string::npos);

  auto spec = spec_for({"true"});
  spec.working_directory = "/nonexistent/test_only_dir";
  auto bad_dir = run_subprocess(spec);
  ASSERT_FALSE(bad_dir);
  EXPECT_NE(bad_dir.error().message().find("/nonexistent/test_only_dir"), std::string::npos);

  auto empty = run_subprocess(spec_for({}));
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().category(), Errc::usage);
}

TEST(Subprocess, TimeoutStopsTheWholeProcessGroup)
{
  auto dir = TempDir::create("test_only_subprocess-");
  ASSERT_TRUE(dir);
  const auto pid_file = dir->path() / "grandchild.pid";
  // The grandchild would outlive a kill of the direct child alone.
  auto spec = spec_for({"sh", "-c", "sleep 100 & echo $! > " + pid_file.string() + "; wait"});
  spec.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto run = run_subprocess(spec);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->ending, SubprocessResult::Ending::timed_out);
  EXPECT_EQ(run->signal, SIGTERM);
  EXPECT_LT(elapsed, 4s);
  EXPECT_NE(run->describe(300ms).find("timed out after 0.3 s"), std::string::npos);
  auto pid_text = read_file(pid_file);
  ASSERT_TRUE(pid_text);
  const pid_t grandchild = std::stoi(*pid_text);
  ASSERT_TRUE(process_alive(::getpid())); // the probe itself works
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(process_alive(grandchild));
}

TEST(Subprocess, ProgramIgnoringSigtermIsKilledAfterTheGrace)
{
  auto spec = spec_for({"sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"});
  spec.timeout = 200ms;
  spec.kill_grace = 300ms;
  auto run = run_subprocess(spec);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->ending, SubprocessResult::Ending::timed_out);
  EXPECT_EQ(run->signal, SIGKILL);
  EXPECT_GE(run->duration, 450ms);
}

TEST(Subprocess, LeftoverBackgroundProcessesAreKilledWhenTheProgramExits)
{
  auto dir = TempDir::create("test_only_subprocess-");
  ASSERT_TRUE(dir);
  const auto pid_file = dir->path() / "bg.pid";
  auto spec = spec_for({"sh", "-c", "sleep 100 >/dev/null 2>&1 & echo $! > " + pid_file.string()});
  auto run = run_subprocess(spec);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_TRUE(run->succeeded());
  EXPECT_LT(run->duration, 5s);
  const pid_t background = std::stoi(*read_file(pid_file));
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(process_alive(background));
}

TEST(Subprocess, SetsidGrandchildIsKilledAtTheTimeout)
{
  auto dir = TempDir::create("test_only_subprocess-");
  ASSERT_TRUE(dir);
  const auto pid_file = dir->path() / "daemon.pid";
  // setsid leaves the process group, so a kill of the group misses it.
  auto spec = spec_for({"sh", "-c", "setsid sh -c 'echo $$ > " + pid_file.string() +
                                      "; exec sleep 100' </dev/null >/dev/null 2>&1 & sleep 100"});
  spec.timeout = 500ms;
  auto run = run_subprocess(spec);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->ending, SubprocessResult::Ending::timed_out);
  auto pid_text = read_file(pid_file);
  ASSERT_TRUE(pid_text) << "the daemon never started";
  const pid_t daemon = std::stoi(*pid_text);
  std::this_thread::sleep_for(100ms);
  const bool alive = process_alive(daemon);
  if (alive) {
    ::kill(daemon, SIGKILL);
  }
  EXPECT_FALSE(alive) << "the setsid grandchild outlived the timeout";
}

TEST(Subprocess, LogIsCappedKeepingHeadAndTailAndSaysWhatWasDropped)
{
  auto dir = TempDir::create("test_only_subprocess-");
  ASSERT_TRUE(dir);
  // 20,000 lines of 11 bytes ("line-NNNNN\n"): 220,000 bytes through a 20,000-byte cap.
  auto spec = spec_for({"sh", "-c", "i=10000; while [ $i -lt 30000 ]; do echo line-$i; i=$((i+1)); done"});
  spec.log_file = dir->path() / "run.log";
  spec.log_cap_bytes = 20000;
  auto run = run_subprocess(spec);
  ASSERT_TRUE(run) << run.error().message();
  auto log = read_file(spec.log_file);
  ASSERT_TRUE(log);
  EXPECT_LT(log->size(), 20000u + 200u);
  EXPECT_EQ(log->substr(0, 11), "line-10000\n");
  EXPECT_EQ(log->substr(log->size() - 11), "line-29999\n");
  EXPECT_NE(log->find("[prewarm: 200000 bytes of output dropped here"), std::string::npos) << log->substr(9990, 300);
}

TEST(Subprocess, SignalDeathIsReported)
{
  auto run = run_subprocess(spec_for({"sh", "-c", "kill -SEGV $$"}));
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->ending, SubprocessResult::Ending::signaled);
  EXPECT_EQ(run->signal, SIGSEGV);
  EXPECT_NE(run->describe().find("signal 11"), std::string::npos);
}

TEST(Subprocess, LogFileGetsEverythingAndTheTailIsBounded)
{
  auto dir = TempDir::create("test_only_subprocess-");
  ASSERT_TRUE(dir);
  auto spec = spec_for({"sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done"});
  spec.log_file = dir->path() / "run.log";
  spec.tail_bytes = 100;
  auto run = run_subprocess(spec);
  ASSERT_TRUE(run) << run.error().message();
  auto log = read_file(spec.log_file);
  ASSERT_TRUE(log);
  EXPECT_EQ(log->substr(0, 7), "line-0\n");
  EXPECT_NE(log->find("line-1999\n"), std::string::npos);
  EXPECT_EQ(run->output_tail.size(), 100u);
  EXPECT_EQ(run->output_tail.substr(run->output_tail.size() - 10), "line-1999\n");
}

TEST(Subprocess, StdinIsEmpty)
{
  auto run = run_subprocess(spec_for({"cat"}));
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_TRUE(run->succeeded());
  EXPECT_EQ(run->output_tail, "");
}

TEST(Subprocess, QuoteArgvQuotesOnlyWhatNeedsIt)
{
  EXPECT_EQ(quote_argv({"python3", "x.py", "--precision", "{precision}"}), "python3 x.py --precision {precision}");
  EXPECT_EQ(quote_argv({"sh", "-c", "echo 'a b'", ""}), "sh -c 'echo '\\''a b'\\''' ''");
}

} // namespace
} // namespace prewarm::command
