// SPDX-License-Identifier: Apache-2.0
// Progress of `prewarm build` on stderr while jobs run, so that a long job
// (a torch.compile warm-up takes minutes) is not mistaken for a hang:
//   live       stderr is a terminal: one line per running job, redrawn every
//              second, "  12.4 s  cpu/qwen/fp32: <what it is doing>"; other
//              log lines print above them
//   heartbeat  otherwise (CI logs): every interval (10 s) one line
//              "prewarm: still running 2 jobs: cpu/qwen/fp32 (12 s: ...), ..."
//   off        -q, or PREWARM_PROGRESS=off
// "What it is doing" is the last line the job wrote to its log, else what
// the plan said it would do. PREWARM_PROGRESS=live|heartbeat|off forces a
// mode; PREWARM_PROGRESS_INTERVAL=SECONDS (decimals allowed) sets the
// heartbeat interval (tests use a short one).
#pragma once

#include "base/error.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace prewarm::bundle_build {

enum class ProgressMode { live, heartbeat, off };
std::string_view to_string(ProgressMode mode);

struct ProgressOptions
{
  ProgressMode mode = ProgressMode::off;
  std::chrono::milliseconds interval{10'000}; // heartbeat period
  std::string mode_origin = "default";        // for `build --show-config`
  std::string interval_origin = "default";
};

// From the log level, whether stderr is a terminal and the two variables.
// Errc::usage for a value of either variable that means nothing.
Result<ProgressOptions> progress_options_from_environment();

class ProgressBoard
{
public:
  explicit ProgressBoard(ProgressOptions options);
  ~ProgressBoard(); // stops drawing and erases the live lines
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;

  void job_started(std::size_t key, std::string job_id, std::string plan, std::filesystem::path log_file);
  void job_finished(std::size_t key);

private:
  struct Running
  {
    std::string job_id;
    std::string plan; // what the plan said the job does
    std::filesystem::path log_file;
    std::chrono::steady_clock::time_point since;
  };

  void loop();
  std::string doing(const Running& job) const;
  void heartbeat_locked();
  void erase_locked();
  void draw_locked();
  void print_line(std::string_view line); // the log's line sink in live mode

  ProgressOptions m_options;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  std::map<std::size_t, Running> m_running;
  std::size_t m_drawn = 0; // live lines now on the terminal
  std::thread m_thread;
};

} // namespace prewarm::bundle_build
