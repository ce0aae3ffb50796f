// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_pool.hpp"

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace prewarm::jobs {

namespace {

// The free slots of the live SharedSlots; null when there is none.
struct Slots
{
  std::mutex mutex;
  std::condition_variable freed;
  unsigned free = 0;
};
Slots* g_slots = nullptr;

// Waits for a free slot while `wanted()` (checked again whenever a slot is
// given back or a pool ends); true: a slot is taken.
bool
take_slot(Slots& slots, const std::function<bool()>& wanted)
{
  std::unique_lock lock(slots.mutex);
  slots.freed.wait(lock, [&] { return slots.free > 0 || !wanted(); });
  if (slots.free == 0) {
    return false;
  }
  --slots.free;
  return true;
}

void
give_slot(Slots& slots)
{
  {
    std::scoped_lock lock(slots.mutex);
    ++slots.free;
  }
  slots.freed.notify_all();
}

} // namespace

SharedSlots::SharedSlots(unsigned total)
{
  assert(g_slots == nullptr);
  g_slots = new Slots;
  g_slots->free = total > 1 ? total - 1 : 0;
}

SharedSlots::~SharedSlots()
{
  delete g_slots;
  g_slots = nullptr;
}

void
for_each_job(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& job,
             const std::function<bool()>& stop)
{
  std::atomic<std::size_t> next{0};
  const auto more = [&] { return next.load() < count && !(stop && stop()); };
  // One job per turn: with a budget, an extra thread holds a slot only
  // while a job of its runs.
  const auto turn = [&] {
    if (stop && stop()) {
      return false;
    }
    const std::size_t i = next.fetch_add(1);
    if (i >= count) {
      return false;
    }
    job(i);
    return true;
  };
  const auto extra_worker = [&] {
    for (;;) {
      if (g_slots == nullptr) {
        if (!turn()) {
          return;
        }
        continue;
      }
      if (!take_slot(*g_slots, more)) {
        return;
      }
      const bool went_on = turn();
      give_slot(*g_slots);
      if (!went_on) {
        return;
      }
    }
  };
  const auto wanted = std::clamp<std::size_t>(threads == 0 ? 1 : threads, 1, std::max<std::size_t>(count, 1));
  std::vector<std::jthread> pool;
  pool.reserve(wanted - 1);
  for (std::size_t t = 1; t < wanted; ++t) {
    pool.emplace_back(extra_worker);
  }
  while (turn()) {
  }
  if (g_slots != nullptr) {
    // Extra threads still waiting for a slot see there is no job left.
    std::scoped_lock lock(g_slots->mutex);
    g_slots->freed.notify_all();
  }
} // the other threads join here

} // namespace prewarm::jobs
