// SPDX-License-Identifier: Apache-2.0
// Bounded helpers for probing: a vendor tool or a vendor driver may hang or
// crash, and the container must start anyway. Both helpers kill what they
// started when the deadline passes.
#pragma once

#include "base/error.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace prewarm::host {

// Runs argv[0] (looked up in PATH) with stdin and stderr on /dev/null and
// returns its stdout (at most `max_output` bytes). Not found, killed at the
// deadline, or a non-zero exit is an Errc::failed error saying which.
Result<std::string> run_command(const std::vector<std::string>& argv,
                                std::chrono::milliseconds timeout,
                                std::size_t max_output = 1 << 20);

// Runs `work` in a forked child and returns the string it produced. A crash
// (a broken OpenCL ICD segfaulting) or a hang in `work` becomes an error here
// instead of taking the process down. Call it only while single-threaded.
Result<std::string> run_isolated(const std::function<std::string()>& work,
                                 std::chrono::milliseconds timeout,
                                 std::size_t max_output = 4 << 20);

} // namespace prewarm::host
