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

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace prewarm::build {

using process::Environment;

struct ChildSpec
{
  std::vector<std::string> argv;   // argv[0] is a path (no PATH lookup)
  Environment environment;         // exactly what the child sees
  std::filesystem::path log_file;  // stdout and stderr, created
  std::filesystem::path working_directory; // empty: the parent's
  std::chrono::seconds timeout{0}; // 0: none; then SIGKILL
};

struct ChildResult
{
  int exit_code = -1; // 128 + N when killed by signal N
  bool timed_out = false;
  double seconds = 0;
  std::string describe() const; // "exited with status 1", "killed by signal 9", "timed out"
};

Result<ChildResult> run_child(const ChildSpec& spec);

// The last `max_bytes` of a file, for error reports (empty when unreadable).
std::string file_tail(const std::filesystem::path& path, std::size_t max_bytes = 4096);

// The running executable (/proc/self/exe), to re-run ourselves for a job.
Result<std::filesystem::path> self_executable();

} // namespace prewarm::build
