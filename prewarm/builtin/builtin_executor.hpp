// SPDX-License-Identifier: Apache-2.0
// Runs built-in model jobs (presets and inline architectures) on a present
// device: each job is a child `prewarm run-job --spec FILE` process; the job
// spec (builtin/job_request.hpp) carries the resolved model, shapes, device and
// every cache it can fill (program store, PoCL, CUDA, NEO) pointed at the
// job's staging directories, which the child sets before the OpenCL ICD loads.
#pragma once

#include "builtin/job_request.hpp"
#include "jobs/executor.hpp"

#include <chrono>
#include <filesystem>

namespace prewarm::builtin {

struct BuiltinExecutorOptions
{
  std::filesystem::path executable; // a `prewarm` binary (run-job)
  std::chrono::seconds timeout{std::chrono::minutes(30)};
};

// The spec of a run job whose child works in `staging` (its cache kinds are
// <kind>/ below it) and writes the engine's report to `report_file`.
Result<BuiltinJobRequest> builtin_job_request(const jobs::JobContext& context, const std::filesystem::path& staging,
                                              const std::filesystem::path& report_file);

class BuiltinExecutor final : public jobs::Executor
{
public:
  explicit BuiltinExecutor(BuiltinExecutorOptions options) : m_options(std::move(options)) {}
  std::string_view name() const override { return "builtin"; }
  Result<jobs::JobOutcome> run(const jobs::JobContext& context) override;

private:
  BuiltinExecutorOptions m_options;
};

} // namespace prewarm::builtin
