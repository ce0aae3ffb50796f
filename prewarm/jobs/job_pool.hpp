// SPDX-License-Identifier: Apache-2.0
// The one pool every part of the builder runs independent jobs on: the
// build's jobs (bundle_build/build_runner.hpp) and the AOT compiles of one job
// (aot/aot_compiler.hpp). Up to `threads` threads take the next job index
// until none is left or the caller says stop; the calling thread is one of
// them. Results come back in job order, whatever order the threads finished
// in, so output that is built from them is the same at --jobs 1 and --jobs 8.
#pragma once

#include "base/error.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace prewarm::jobs {

// Runs job(i) for i = 0, 1, ... count-1 on up to `threads` threads (0 counts
// as 1). Before each job is handed out, `stop` is asked (when set): once it
// says true no further job starts; those running finish. Returns when every
// started job has.
void for_each_job(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& job,
                  const std::function<bool()>& stop = {});

// Every job runs (one failure does not cancel the others: the caller decides
// whether to keep going); result i belongs to job i.
template<typename T>
std::vector<Result<T>>
run_jobs(std::size_t count, unsigned threads, const std::function<Result<T>(std::size_t)>& job)
{
  std::vector<std::optional<Result<T>>> slots(count);
  for_each_job(count, threads, [&](std::size_t i) { slots[i].emplace(job(i)); });
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

} // namespace prewarm::jobs
