// SPDX-License-Identifier: Apache-2.0
// SIGTERM and SIGINT during `prewarm build`: the handler only records the
// signal; every wait for a child (command workloads, builtin jobs) polls it,
// kills what it started and returns E_INTERRUPTED, and the build stops before
// its next job. The temporary directories are then removed on the way out
// (their owners' destructors), and the command re-raises the signal so that
// its caller sees it.
#pragma once

#include "base/error.hpp"

#include <string_view>

namespace prewarm::jobs {

// Installs the handlers (SA_RESTART off: a blocking wait returns EINTR).
void catch_interruptions();

// The signal that arrived, or 0.
int interruption_signal();

// E_INTERRUPTED naming the signal and what was stopped.
Error interrupted_error(std::string_view what);

// After cleanup: the default action of the recorded signal (the process ends
// as if it had not caught it). Returns when no signal arrived.
void reraise_interruption();

} // namespace prewarm::jobs
