// SPDX-License-Identifier: Apache-2.0
// One ocloc run per distinct input while a SharedOclocRuns is alive: the
// sharing itself, and the real ocloc behind a logging wrapper that counts
// its processes from outside prewarm.
#include "aot/shared_ocloc_runs.hpp"

#include "base/files.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace prewarm::aot {
namespace {

OclocOutput
output(std::string zebin)
{
  OclocOutput out;
  out.zebin = std::move(zebin);
  return out;
}

TEST(SharedOclocRuns, WithoutOneEveryCallRuns)
{
  int runs = 0;
  const auto run = [&]() -> Result<OclocOutput> { return output(std::to_string(++runs)); };
  EXPECT_EQ(shared_output_run("k", run)->zebin, "1");
  EXPECT_EQ(shared_output_run("k", run)->zebin, "2");
}

TEST(SharedOclocRuns, OneRunPerKeyAndItsResultForEveryCaller)
{
  const SharedOclocRuns shared;
  int runs = 0;
  const auto run = [&]() -> Result<OclocOutput> { return output(std::to_string(++runs)); };
  EXPECT_EQ(shared_output_run("a", run)->zebin, "1");
  EXPECT_EQ(shared_output_run("a", run)->zebin, "1");
  EXPECT_EQ(shared_output_run("b", run)->zebin, "2");
  // A failure is the input's result too: shared, not run again.
  const auto failing = [&]() -> Result<OclocOutput> {
    ++runs;
    return fail(Errc::failed, "build failed");
  };
  EXPECT_FALSE(shared_output_run("c", failing));
  EXPECT_FALSE(shared_output_run("c", failing));
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(shared.counts().asked, 5U);
  EXPECT_EQ(shared.counts().ran, 3U);
}

TEST(SharedOclocRuns, ACallerWhileTheRunIsUnderWayWaitsForIt)
{
  const SharedOclocRuns shared;
  std::atomic<int> runs{0};
  const auto slow = [&]() -> Result<OclocOutput> {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return output("zebin");
  };
  std::vector<std::string> got(6);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] { got[i] = shared_output_run("same", slow)->zebin; });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(runs.load(), 1);
  for (const auto& g : got) {
    EXPECT_EQ(g, "zebin");
  }
}

TEST(SharedOclocRuns, KeysOfDifferentPartsDiffer)
{
  EXPECT_NE(run_key({"ab", "c"}), run_key({"a", "bc"}));
  EXPECT_NE(run_key({"a", ""}), run_key({"a"}));
  EXPECT_EQ(run_key({"a", "b"}), run_key({"a", "b"}));
}

// The real ocloc through a wrapper that logs every process it starts.
class SharedRealOcloc : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto real = Ocloc::locate();
    if (!real) {
      GTEST_SKIP() << "ocloc not usable here: " << real.error().message();
    }
    auto dir = TempDir::create("prewarm-shared-ocloc-");
    ASSERT_TRUE(dir) << dir.error().message();
    m_dir.emplace(std::move(*dir));
    const auto wrapper = m_dir->path() / "ocloc";
    std::ofstream(wrapper) << "#!/bin/sh\necho \"$1\" >>'" << log().string() << "'\nexec '"
                           << real->executable().string() << "' \"$@\"\n";
    std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
    auto ocloc = Ocloc::at(wrapper);
    ASSERT_TRUE(ocloc) << ocloc.error().message();
    m_ocloc.emplace(std::move(*ocloc));
  }
  std::filesystem::path log() const { return m_dir->path() / "runs.log"; }
  // Lines of the log that start with `subcommand`.
  int runs_of(std::string_view subcommand) const
  {
    std::ifstream in(log());
    int count = 0;
    for (std::string line; std::getline(in, line);) {
      count += line == subcommand ? 1 : 0;
    }
    return count;
  }
  std::optional<TempDir> m_dir;
  std::optional<Ocloc> m_ocloc;
};

TEST_F(SharedRealOcloc, TheSameInputCompilesOnceAndGivesTheBytesOfAnUnsharedCompile)
{
  constexpr std::string_view k_source = "__kernel void test_only_k(__global float* x) { x[0] *= TILE; }\n";
  OclocCompileRequest request;
  request.source_name = "k.cl";
  request.source = k_source;
  request.options = "-DTILE=4";
  request.device = "acm-g11";
  const auto unshared = m_ocloc->compile(request);
  ASSERT_TRUE(unshared) << unshared.error().message();
  ASSERT_EQ(runs_of("compile"), 1);

  const SharedOclocRuns shared;
  auto renamed = request;
  renamed.source_name = "other-name.cl"; // for messages only: the same input
  const auto first = m_ocloc->compile(request);
  const auto second = m_ocloc->compile(renamed);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(runs_of("compile"), 2); // the unshared one, then one for both
  EXPECT_EQ(first->zebin, unshared->zebin);
  EXPECT_EQ(second->zebin, unshared->zebin);

  // Any input that changes the output is another run.
  auto options = request;
  options.options = "-DTILE=8";
  ASSERT_TRUE(m_ocloc->compile(options));
  auto device = request;
  device.device = "acm-g10";
  ASSERT_TRUE(m_ocloc->compile(device));
  EXPECT_EQ(runs_of("compile"), 4);

  // validate likewise: once per (zebin, device).
  ASSERT_TRUE(m_ocloc->validate(first->zebin, "acm-g11"));
  ASSERT_TRUE(m_ocloc->validate(second->zebin, "acm-g11"));
  EXPECT_EQ(runs_of("validate"), 1);
  EXPECT_EQ(shared.counts().asked, 6U);
  EXPECT_EQ(shared.counts().ran, 4U);
}

} // namespace
} // namespace prewarm::aot
