// SPDX-License-Identifier: Apache-2.0
// Running a Docker credential helper: `PROGRAM get`, the server on stdin, its
// JSON answer on stdout (at most 64 KiB), killed at the deadline.
#pragma once

#include "base/error.hpp"

#include <chrono>
#include <string>

namespace prewarm::registry {

// Not found, killed, or a non-zero exit (the helper's stderr in the message):
// Errc::usage E_CREDENTIALS.
Result<std::string> run_credential_helper(const std::string& program,
                                          const std::string& server,
                                          std::chrono::milliseconds timeout);

} // namespace prewarm::registry
