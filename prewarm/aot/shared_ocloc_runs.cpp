// SPDX-License-Identifier: Apache-2.0
#include "aot/shared_ocloc_runs.hpp"

#include "base/digest.hpp"

#include <atomic>
#include <cassert>
#include <exception>
#include <future>
#include <map>
#include <mutex>

namespace prewarm::aot {

namespace {

template<typename T>
using RunTable = std::map<std::string, std::shared_future<Result<T>>, std::less<>>;

// The runs of the live SharedOclocRuns; null when there is none. Set before
// a build's jobs start and cleared after they end (as jobs::SharedSlots).
struct Runs
{
  std::mutex mutex;
  RunTable<OclocOutput> outputs;
  RunTable<OclocValidation> validations;
  std::atomic<std::uint64_t> asked{0};
  std::atomic<std::uint64_t> ran{0};
};
Runs* g_runs = nullptr;

template<typename T>
Result<T>
once_per_key(RunTable<T> Runs::*table, const std::string& key, const std::function<Result<T>()>& run)
{
  if (g_runs == nullptr) {
    return run();
  }
  auto& runs = *g_runs;
  ++runs.asked;
  std::promise<Result<T>> promise;
  std::shared_future<Result<T>> earlier;
  {
    const std::scoped_lock lock(runs.mutex);
    auto& map = runs.*table;
    if (const auto it = map.find(key); it != map.end()) {
      earlier = it->second;
    } else {
      map.emplace(key, promise.get_future().share());
    }
  }
  if (earlier.valid()) {
    return earlier.get(); // ran, or running on another thread: its result
  }
  ++runs.ran;
  try {
    auto result = run();
    promise.set_value(result);
    return result;
  } catch (...) {
    promise.set_exception(std::current_exception());
    throw;
  }
}

} // namespace

SharedOclocRuns::SharedOclocRuns()
{
  assert(g_runs == nullptr);
  g_runs = new Runs;
}

SharedOclocRuns::~SharedOclocRuns()
{
  delete g_runs;
  g_runs = nullptr;
}

OclocRunCounts
SharedOclocRuns::counts() const
{
  return {g_runs->asked.load(), g_runs->ran.load()};
}

Result<OclocOutput>
shared_output_run(const std::string& key, const std::function<Result<OclocOutput>()>& run)
{
  return once_per_key(&Runs::outputs, key, run);
}

Result<OclocValidation>
shared_validation_run(const std::string& key, const std::function<Result<OclocValidation>()>& run)
{
  return once_per_key(&Runs::validations, key, run);
}

std::string
run_key(std::initializer_list<std::string_view> parts)
{
  std::string key;
  for (const auto part : parts) {
    key += std::to_string(part.size());
    key += ':';
    key += part;
  }
  return sha256_hex(key); // a program's source can be large; its digest is kept
}

} // namespace prewarm::aot
