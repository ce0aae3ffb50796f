// SPDX-License-Identifier: Apache-2.0
// Runs N independent jobs on up to `jobs` threads. Results come back in job
// order, whatever order the threads finished in, so output that is built from
// them is the same at --jobs 1 and --jobs 8.
#pragma once

#include "base/error.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

namespace prewarm::aot {

// Every job runs (one failure does not cancel the others: the caller decides
// whether to keep going); result i belongs to job i.
template<typename T>
std::vector<Result<T>>
run_jobs(std::size_t count, unsigned jobs, const std::function<Result<T>(std::size_t)>& job)
{
  std::vector<std::optional<Result<T>>> slots(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      slots[i].emplace(job(i));
    }
  };
  const unsigned threads = static_cast<unsigned>(std::clamp<std::size_t>(jobs == 0 ? 1 : jobs, 1, std::max<std::size_t>(count, 1)));
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back(worker);
    }
  } // jthreads join here
  std::vector<Result<T>> results;
  results.reserve(count);
  for (auto& slot : slots) {
    results.push_back(std::move(*slot));
  }
  return results;
}

// The order in which to run `count` jobs so that the longest start first
// (longest-processing-time scheduling: what runs alone at the end is short).
// `cost(i)` estimates job i's length; ties keep job order, so the order is
// deterministic.
template<typename Cost>
std::vector<std::size_t>
longest_first(std::size_t count, Cost&& cost)
{
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) {
    order[i] = i;
  }
  std::ranges::stable_sort(order, [&](std::size_t a, std::size_t b) { return cost(a) > cost(b); });
  return order;
}

} // namespace prewarm::aot
