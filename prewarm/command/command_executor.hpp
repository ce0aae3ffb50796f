// SPDX-License-Identifier: Apache-2.0
// `prewarm build`'s executor for command workloads (manifest `command:`):
// runs the program once per job with the selected caches redirected into the
// job's work directory (command_job.hpp) and hands back one output per group
// of kinds that share their requirements, so that, say, a Triton cache still
// installs on a host whose NVIDIA driver differs from the build host's.
//
// The program also sees PREWARM_TARGET (the registry name) and, when its
// command names "{precision}" (else it has no precision axis: one job per
// target), PREWARM_PRECISION, so a warm-up script can pick the device a job
// is for.
#pragma once

#include "jobs/executor.hpp"
#include "command/command_job.hpp"

#include <filesystem>
#include <functional>
#include <mutex>

namespace prewarm::command {

struct CommandExecutorOptions
{
  HomeMode home = HomeMode::private_home;
  // The NVIDIA GPUs of this host; null: probe_nvidia_gpus(). For tests.
  std::function<std::vector<DeviceProperties>()> list_nvidia_gpus;
  // Framework versions as slice requirements or only in the job line
  // (identity.hpp).
  FrameworkRequirements frameworks = FrameworkRequirements::required;
  // `--capture-root`: every command job captures at this install root
  // (capture_root.hpp), one job at a time; empty: in its work directory,
  // in parallel.
  std::filesystem::path capture_root;
};

class CommandExecutor final : public jobs::Executor
{
public:
  explicit CommandExecutor(CommandExecutorOptions options = {}) : m_options(std::move(options)) {}
  std::string_view name() const override { return "command"; }
  Result<jobs::JobOutcome> run(const jobs::JobContext& context) override;

private:
  CommandExecutorOptions m_options;
  std::mutex m_capture_root_busy; // held by the job that captures at the root
};

// The manifest's workload in this module's terms: kind names parsed, a shell
// command joined into the one string `sh -c` runs.
Result<CommandWorkload> to_command_workload(const manifest::CommandWorkload& workload);

// What the command asks the runtime to export (its custom caches' variables,
// its runtime_env) that the runtime exports only when the trust policy
// allows it (bundle/runtime_variable.hpp): one warning each, naming
// install.environment. The hit proof ran with them set; an application
// installed under a policy that does not name them runs without them.
std::vector<std::string> unexported_variables(const manifest::CommandWorkload& command);

// The per-job JSON report (outcome, duration, per-kind files and bytes,
// requirements, frameworks, warnings, log tail on failure).
std::string report_json(const CommandJobResult& result);

} // namespace prewarm::command
