// SPDX-License-Identifier: Apache-2.0
#include "jobs/interruption.hpp"

#include <fmt/format.h>

#include <signal.h>

#include <atomic>
#include <cstring>

namespace prewarm::jobs {

namespace {

std::atomic<int> g_signal{0};

void
record(int signal_number)
{
  g_signal.store(signal_number, std::memory_order_relaxed);
}

} // namespace

void
catch_interruptions()
{
  struct sigaction action{};
  action.sa_handler = &record;
  ::sigemptyset(&action.sa_mask);
  for (const int s : {SIGTERM, SIGINT}) {
    ::sigaction(s, &action, nullptr);
  }
}

int
interruption_signal()
{
  return g_signal.load(std::memory_order_relaxed);
}

Error
interrupted_error(std::string_view what)
{
  const int s = interruption_signal();
  return Error(Errc::failed, fmt::format("{}: interrupted by signal {} ({})", what, s, ::strsignal(s)), "E_INTERRUPTED");
}

void
reraise_interruption()
{
  if (const int s = interruption_signal(); s != 0) {
    ::signal(s, SIG_DFL);
    ::raise(s);
  }
}

} // namespace prewarm::jobs
