// SPDX-License-Identifier: Apache-2.0
#include "aot/job_pool.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace prewarm::aot {
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

TEST(JobPool, ZeroJobs)
{
  auto results = run_jobs<int>(0, 2, [](std::size_t) -> Result<int> { return 0; });
  EXPECT_TRUE(results.empty());
}

} // namespace
} // namespace prewarm::aot
