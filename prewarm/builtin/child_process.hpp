// SPDX-License-Identifier: Apache-2.0
// Runs one job as a child process of `prewarm` with a complete environment
// and its output in a log file. Jobs run in children because driver caches
// (PoCL, CUDA) read their directory from the environment once, when the
// OpenCL ICD loads: only a fresh process can point them at a job's staging.
// A layer over process/run.hpp: the output goes to a log file, and the
// builder's interruption stops the child.
#pragma once

#include "base/error.hpp"
#include "process/environment.hpp"
#include "process/run.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace prewarm::builtin {

using process::Environment;

struct ChildSpec
{
  std::vector<std::string> argv;           // argv[0] is a path (no PATH lookup)
  Environment environment;                 // exactly what the child sees
  std::filesystem::path log_file;          // stdout and stderr, created
  std::filesystem::path working_directory; // empty: the parent's
  std::chrono::seconds timeout{0};         // 0: none; then SIGKILL
};

// How the child ended (process/run.hpp: describe() and succeeded() say it as
// every runner does). E_INTERRUPTED when the builder was interrupted.
Result<process::Outcome> run_child(const ChildSpec& spec);

// The last `max_bytes` of a file, for error reports (empty when unreadable).
std::string file_tail(const std::filesystem::path& path, std::size_t max_bytes = 4096);

// The running executable (/proc/self/exe), to re-run ourselves for a job.
Result<std::filesystem::path> self_executable();

} // namespace prewarm::builtin
