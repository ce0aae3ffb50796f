// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace prewarm::jobs {
namespace {

TEST(JobPool, ResultsInJobOrderAtAnyParallelism)
{
  for (unsigned jobs : {1u, 2u, 7u}) {
    auto results = run_jobs<int>(20, jobs, [](std::size_t i) -> Result<int> {
      // Later jobs finish first: order must still be by index.
      std::this_thread::sleep_for(std::chrono::microseconds(200 * (20 - i)));
      return static_cast<int>(i * i);
    });
    ASSERT_EQ(results.size(), 20u);
    for (std::size_t i = 0; i < results.size(); ++i) {
      ASSERT_TRUE(results[i]);
      EXPECT_EQ(*results[i], static_cast<int>(i * i)) << "jobs=" << jobs;
    }
  }
}

TEST(JobPool, AFailureDoesNotStopOthers)
{
  auto results = run_jobs<int>(5, 2, [](std::size_t i) -> Result<int> {
    if (i == 1) {
      return fail(Errc::failed, "test_only job 1 failed");
    }
    return 1;
  });
  ASSERT_EQ(results.size(), 5u);
  EXPECT_FALSE(results[1]);
  for (std::size_t i : {0u, 2u, 3u, 4u}) {
    EXPECT_TRUE(results[i]);
  }
}

TEST(JobPool, UsesSeveralThreads)
{
  std::mutex mutex;
  std::set<std::thread::id> seen;
  run_jobs<int>(8, 2, [&](std::size_t) -> Result<int> {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::scoped_lock lock(mutex);
    seen.insert(std::this_thread::get_id());
    return 0;
  });
  EXPECT_EQ(seen.size(), 2u);
}

// Nested pools under one budget: build jobs and their compiles together
// never run more than the budget at once, and compiles take the slots no
// build job holds.
struct Concurrency
{
  std::atomic<int> now{0};
  std::atomic<int> most{0};
  void work()
  {
    const int running = ++now;
    int seen = most.load();
    while (running > seen && !most.compare_exchange_weak(seen, running)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
    --now;
  }
};

TEST(JobPool, NestedPoolsShareOneBudget)
{
  Concurrency compiles;
  {
    const SharedSlots slots(3);
    for_each_job(4, 3, [&](std::size_t) { for_each_job(4, 3, [&](std::size_t) { compiles.work(); }); });
  }
  EXPECT_LE(compiles.most.load(), 3);
  EXPECT_GE(compiles.most.load(), 2);

  // Without a budget each pool runs its own threads: 3 x 3 at once.
  Concurrency unbounded;
  for_each_job(3, 3, [&](std::size_t) { for_each_job(3, 3, [&](std::size_t) { unbounded.work(); }); });
  EXPECT_GT(unbounded.most.load(), 3);
}

TEST(JobPool, OneJobsCompilesTakeEverySlotOfTheBudget)
{
  Concurrency compiles;
  {
    const SharedSlots slots(4);
    for_each_job(1, 4, [&](std::size_t) { for_each_job(12, 4, [&](std::size_t) { compiles.work(); }); });
  }
  EXPECT_EQ(compiles.most.load(), 4);
}

TEST(JobPool, LongestFirstOrdersByCostKeepingJobOrderOnTies)
{
  const std::vector<int> cost = {3, 9, 3, 1, 9, 5};
  const auto order = longest_first(cost.size(), [&](std::size_t i) { return cost[i]; });
  EXPECT_EQ(order, (std::vector<std::size_t>{1, 4, 5, 0, 2, 3}));
  EXPECT_TRUE(longest_first(0, [](std::size_t) { return 0; }).empty());
}

TEST(JobPool, LongestFirstShortensTheTailOnTwoWorkers)
{
  // Seven short jobs then one long one: in job order the long one starts
  // last and runs alone; longest first, it overlaps the short ones.
  const std::vector<int> ms = {20, 20, 20, 20, 20, 20, 20, 140};
  auto wall = [&](const std::vector<std::size_t>& order) {
    const auto start = std::chrono::steady_clock::now();
    run_jobs<int>(order.size(), 2, [&](std::size_t position) -> Result<int> {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms[order[position]]));
      return 0;
    });
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<std::size_t> job_order = {0, 1, 2, 3, 4, 5, 6, 7};
  const double in_job_order = wall(job_order);
  const double longest = wall(longest_first(ms.size(), [&](std::size_t i) { return ms[i]; }));
  // Job order: ~60 ms of short jobs + 140 ms alone = ~220 ms; longest first: ~140 ms.
  EXPECT_LT(longest, in_job_order - 0.04) << longest << " vs " << in_job_order;
}

TEST(JobPool, ZeroJobs)
{
  auto results = run_jobs<int>(0, 2, [](std::size_t) -> Result<int> { return 0; });
  EXPECT_TRUE(results.empty());
}

// The build's stop (a failed job under stop, an interruption): no job starts
// once it says so; the jobs already running finish.
TEST(JobPool, NoJobStartsAfterStop)
{
  for (unsigned threads : {1u, 3u}) {
    std::atomic<std::size_t> started{0};
    std::atomic<std::size_t> started_after_stop{0};
    std::atomic<bool> stop{false};
    for_each_job(
      100, threads,
      [&](std::size_t i) {
        ++started;
        started_after_stop += stop.load() ? 1 : 0;
        if (i == 4) {
          stop = true;
        }
      },
      [&] { return stop.load(); });
    EXPECT_GE(started.load(), 5u) << "threads=" << threads;
    if (threads == 1) {
      EXPECT_EQ(started.load(), 5u); // jobs 0..4, then nothing
    }
    // A thread that passed the check just before job 4 set the stop may
    // start one more; none starts a second.
    EXPECT_LE(started_after_stop.load(), threads - 1) << "threads=" << threads;
  }
}

} // namespace
} // namespace prewarm::jobs
