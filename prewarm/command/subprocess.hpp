// SPDX-License-Identifier: Apache-2.0
// Runs one command workload's program to completion: what process/run.hpp
// does (argv as-is, no shell unless asked, a complete environment, a working
// directory, a timeout on the whole process group), plus stdout+stderr
// appended to a capped log file with a bounded in-memory tail for error
// reports, a session token that finds what the program left behind outside
// its group, and the builder's interruption.
#pragma once

#include "base/error.hpp"
#include "process/command_line.hpp"
#include "process/environment.hpp"
#include "process/run.hpp"

#include <chrono>
#include <cstdint>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::command {

// The complete environment of a child, this process's own, and argv as a
// shell-quoted line (process/: one of each for every runner).
using process::Environment;
using process::inherited_environment;
using process::quote_argv;

// How argv is run. via_shell runs `/bin/sh -c argv[0] argv[1..]` (argv[1]
// becomes $0): only when a manifest asks for it, so that no argv element is
// ever re-parsed by a shell by accident.
enum class ShellMode { direct, via_shell };

struct SubprocessSpec
{
  std::vector<std::string> argv;             // argv[0] is looked up in the child's PATH
  ShellMode shell = ShellMode::direct;
  std::filesystem::path working_directory;   // empty: inherit ours
  Environment environment;                   // exactly what the child sees
  std::chrono::milliseconds timeout{0};      // 0: no limit
  // After the timeout: SIGTERM to the group, then SIGKILL after this grace.
  std::chrono::milliseconds kill_grace{std::chrono::seconds(5)};
  std::filesystem::path log_file;            // appended to; empty: no log file
  // At most this much of the output goes to log_file: the first half as it
  // comes, the last half at the end, and between them a line saying how many
  // bytes were dropped (a chatty program must not fill the build's disk).
  std::uint64_t log_cap_bytes = std::uint64_t{16} << 20;
  std::size_t tail_bytes = 16 * 1024;        // how much output to keep in memory
};

// How the program ended (process/run.hpp: ending, exit status or signal,
// duration; describe() and succeeded() say it as every runner does), and
// the end of what it wrote. Its output went to the log and the tail, never
// into Outcome::output.
struct SubprocessResult : process::Outcome
{
  std::string output_tail; // the last tail_bytes of stdout+stderr (may start mid-line)
};

// Starts the program and waits for it. An error means it could not be
// started at all (missing program, bad working directory, no fork); a
// program that runs and fails is a successful call whose result says how.
// Processes the program leaves behind are killed once it has exited (or timed
// out), so nothing keeps writing into a cache after it is measured: its
// process group, and every process that carries the run's session token in
// its environment (a `setsid` daemon leaves the group but keeps the
// environment). SIGTERM/SIGINT to the builder (jobs/interruption.hpp) kills them
// too and returns E_INTERRUPTED.
Result<SubprocessResult> run_subprocess(const SubprocessSpec& spec);

} // namespace prewarm::command
