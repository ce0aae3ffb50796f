// SPDX-License-Identifier: Apache-2.0
// The one pool every part of the builder runs independent jobs on: the
// build's jobs (bundle_build/build_runner.hpp) and the AOT compiles of one job
// (aot/aot_compiler.hpp). Up to `threads` threads take the next job index
// until none is left or the caller says stop; the calling thread is one of
// them. Results come back in job order, whatever order the threads finished
// in, so output that is built from them is the same at --jobs 1 and --jobs 8.
//
// One budget of processes: pools nest (a build job runs a pool of compiles),
// and while a SharedSlots is alive every pool draws its extra threads from
// it, so `prewarm build --jobs N` runs at most N jobs at once, build jobs and
// compile jobs together, never N build jobs of N compiles each. A pool's
// calling thread needs no slot: it is the thread of the build (the outer
// pool) or of the job that started the inner pool, which holds its slot
// already; an extra thread waits for a free slot before each job it takes,
// so a slot a finished build job gives back is taken by a compile.
#pragma once

#include "base/error.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace prewarm::jobs {

// The budget of one build: `total` jobs at once, the build's own thread
// counted (so total - 1 slots for extra threads); one at a time per process
// (constructing a second while one is alive is a programming error). Without
// one, each pool runs up to its own `threads`.
class SharedSlots
{
public:
  explicit SharedSlots(unsigned total);
  ~SharedSlots();
  SharedSlots(const SharedSlots&) = delete;
  SharedSlots& operator=(const SharedSlots&) = delete;
};

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
