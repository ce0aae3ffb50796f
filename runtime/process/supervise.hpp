// SPDX-License-Identifier: Apache-2.0
// Starting an application for `prewarm-runtime exec`, where run.hpp's child
// (captured, timed out, killed with its group) is not what is wanted: the
// application is the point of the process, so it either replaces it (same
// PID, same signals), or, when exec stays to watch it, runs as its child with
// every signal a direct run would get forwarded, and its end passed on as
// this process's own.
//
// A command that cannot be run exits 127 (not found) or 126 (not
// executable), as env(1) does.
//
// As PID 1 (exec --audit as a container's entrypoint) the parent is the init
// of the PID namespace and reaps every process orphaned to it, as tini does:
// it waits for any child, keeps the main one's status, and returns it once
// the main child ends (the kernel then kills what is left in the namespace).
#pragma once

#include "base/error.hpp"

#include <string>
#include <vector>

namespace prewarm::process {

// execvp(argv); on failure the reason on stderr and _exit(127 or 126).
[[noreturn]] void replace_process(const std::vector<std::string>& argv);

// Forks argv as a child that inherits this process's descriptors and
// environment, forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2
// and SIGWINCH to it (a signal that arrives before its PID is known is
// delivered once it is), and returns its wait status. Errc::failed when it
// cannot fork (nothing was started).
Result<int> run_forwarding_signals(const std::vector<std::string>& argv);

// Ends this process as the child ended (wait status): the same exit status,
// or the same signal raised again, so that the caller sees what a direct run
// would show.
[[noreturn]] void exit_as(int wait_status);

} // namespace prewarm::process
