// SPDX-License-Identifier: Apache-2.0
// Runs one child process to completion under supervision: argv passed as-is
// (execvp, no shell), a complete environment, a working directory, stdin on
// /dev/null, stdout and stderr into a pipe this module reads or into a file
// the caller opened, a timeout (SIGTERM then SIGKILL after a grace, or
// SIGKILL at once) on the child's process group, a cap on its output, and a
// stop request polled while it runs. Every runner of external programs in
// prewarm is a layer over this: host probes (host/subprocess.hpp), command
// workloads (command/subprocess.hpp: log capping, session token,
// interruption), built-in jobs (builtin/child_process.hpp) and ocloc
// (aot/process.hpp).
//
// Between fork and exec the child makes only async-signal-safe calls, so
// this may be called from any thread of a multi-threaded process, except
// run_in_child(), which runs arbitrary code in the forked child.
#pragma once

#include "process/environment.hpp"

#include <chrono>
#include <cstddef>
#include <expected>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::process {

// kill_group: the child leads a process group of its own, and every signal
// (timeout, stop, the clean-up after it exited) goes to the whole group, so
// nothing it started outlives it. share_group: it stays in ours (a terminal's
// Ctrl-C reaches it as it reaches us) and signals go to the child alone.
enum class ProcessGroup { kill_group, share_group };

// Where stderr goes: with stdout (one interleaved stream), /dev/null, or
// Spec::stderr_fd (kept apart from an answer the caller parses).
enum class StderrTo { output, null, descriptor };

struct Spec
{
  std::vector<std::string> argv;             // argv[0] is looked up in the child's PATH unless it holds a '/'
  std::optional<Environment> environment;    // exactly what the child sees; nullopt: ours
  std::filesystem::path working_directory;   // empty: ours
  int output_fd = -1;                        // stdout (and stderr) into this fd; -1: a pipe read here
  StderrTo stderr_to = StderrTo::output;
  int stderr_fd = -1;                        // with StderrTo::descriptor
  // Written to the child's stdin (then end of file); empty: stdin is
  // /dev/null. At most 64 KiB: it is written into the pipe before the child
  // starts, so nothing waits on the child to read it.
  std::string standard_input;
  ProcessGroup group = ProcessGroup::kill_group;
};

struct Supervision
{
  std::chrono::milliseconds timeout{0};    // 0: no limit
  // After the timeout: SIGTERM, then SIGKILL after this grace; 0: SIGKILL at once.
  std::chrono::milliseconds term_grace{0};
  // A child SIGKILLed but not gone after this long is stuck in the kernel (a
  // driver call in uninterruptible sleep): it is left behind, unreaped.
  std::chrono::milliseconds unreaped_grace{std::chrono::seconds(2)};
  // More piped output than this: the child is killed (Ending::output_overflow).
  std::size_t max_output = std::numeric_limits<std::size_t>::max();
  // Each piece of piped output as it comes; unset: collected in Outcome::output.
  std::function<void(const char* data, std::size_t size)> on_output;
  // Polled at least every 20 ms; true: the child is killed (Ending::stopped).
  std::function<bool()> stop_requested;
  // Called once the child has exited or been killed, before the rest of its
  // output is read: to end what it left behind outside its group.
  std::function<void()> after_exit;
};

struct Outcome
{
  enum class Ending { exited, signaled, timed_out, output_overflow, stopped };

  Ending ending = Ending::exited;
  int exit_status = 0;   // when it exited (also after a timeout, if it exited on SIGTERM's request)
  int signal = 0;        // the signal that ended it; for a timeout, the last one sent
  bool unreaped = false; // killed but never gone: left behind (see unreaped_grace)
  std::chrono::steady_clock::duration duration{};
  std::string output;    // the piped output, unless on_output took it

  bool succeeded() const { return ending == Ending::exited && exit_status == 0; }
  // How it ended, for messages; every runner says it this way:
  // "exited with status 130" (an exit status, whatever its value, is not a
  // signal), "killed by signal 11 (Segmentation fault)", "timed out after
  // 5.0 s (stopped with SIGTERM)" or "(killed with SIGKILL)" ("timed out" when
// `timeout` is not given),
  // "killed: more output than the limit", "stopped on request".
  std::string describe(std::chrono::milliseconds timeout = {}) const;
};

// Why a child could not be started: the step that failed and its errno.
struct StartFailure
{
  enum class Step { pipe, standard_input, fork, standard_streams, working_directory, exec };

  Step step = Step::exec;
  int error_number = 0;

  // "cannot run \"ocloc\": No such file or directory",
  // "cannot enter working directory \"/x\": ..."
  std::string describe(const Spec& spec) const;
};

// Starts the program and waits for it. A program that runs and fails is an
// Outcome; only a program that could not be started is a StartFailure.
std::expected<Outcome, StartFailure> run(const Spec& spec, const Supervision& supervision);

// Runs `work` in a forked child (no exec) and pipes the string it returns
// back as the output; an exception in `work` is exit status 1. For code that
// may crash or hang (a vendor driver's device enumeration): the crash or hang
// is the child's. The child shares our process group. Call it only while
// single-threaded.
std::expected<Outcome, StartFailure> run_in_child(const std::function<std::string()>& work,
                                                  const Supervision& supervision);

} // namespace prewarm::process
