// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_pool.hpp"

#include <atomic>
#include <thread>

namespace prewarm::jobs {

void
for_each_job(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& job,
             const std::function<bool()>& stop)
{
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (;;) {
      if (stop && stop()) {
        return;
      }
      const std::size_t i = next.fetch_add(1);
      if (i >= count) {
        return;
      }
      job(i);
    }
  };
  const auto wanted = std::clamp<std::size_t>(threads == 0 ? 1 : threads, 1, std::max<std::size_t>(count, 1));
  std::vector<std::jthread> pool;
  pool.reserve(wanted - 1);
  for (std::size_t t = 1; t < wanted; ++t) {
    pool.emplace_back(worker);
  }
  worker();
} // the other threads join here

} // namespace prewarm::jobs
