// SPDX-License-Identifier: Apache-2.0
#include "host/subprocess.hpp"

#include <gtest/gtest.h>

#include <csignal>

using namespace prewarm;
using namespace std::chrono_literals;

TEST(RunCommand, ReturnsStdout)
{
  auto out = host::run_command({"sh", "-c", "printf 'a,b\\n'; echo ignored >&2"}, 5s);
  ASSERT_TRUE(out) << out.error().message();
  EXPECT_EQ(*out, "a,b\n");
}

TEST(RunCommand, MissingToolIsAnErrorNotACrash)
{
  auto out = host::run_command({"prewarm-test-no-such-tool"}, 5s);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("prewarm-test-no-such-tool"), std::string::npos);
}

TEST(RunCommand, NonZeroExitIsReported)
{
  auto out = host::run_command({"sh", "-c", "exit 7"}, 5s);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("exited with status 7"), std::string::npos);
}

TEST(RunCommand, HangingToolIsKilledAtTheDeadline)
{
  const auto start = std::chrono::steady_clock::now();
  auto out = host::run_command({"sleep", "30"}, 300ms);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("killed"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(RunIsolated, ReturnsTheChildsResult)
{
  auto out = host::run_isolated([] { return std::string(100000, 'x'); }, 5s);
  ASSERT_TRUE(out) << out.error().message();
  EXPECT_EQ(out->size(), 100000u);
}

TEST(RunIsolated, CrashInTheChildIsAnError)
{
  auto out = host::run_isolated(
    []() -> std::string {
      std::raise(SIGSEGV);
      return "unreachable";
    },
    5s);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("signal"), std::string::npos) << out.error().message();
}

TEST(RunIsolated, HangInTheChildIsKilled)
{
  auto out = host::run_isolated(
    []() -> std::string {
      for (;;) {
        pause();
      }
    },
    300ms);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("killed"), std::string::npos);
}
