// SPDX-License-Identifier: Apache-2.0
// Runs built-in model jobs (presets and inline architectures) on a present
// device: each job is a child `prewarm run-job` process whose environment
// points every cache it can fill (program store, PoCL, CUDA, NEO) at the
// job's staging directories, set BEFORE the OpenCL ICD loads.
#pragma once

#include "build/executor.hpp"

#include <chrono>
#include <filesystem>
#include <optional>

namespace prewarm::build {

struct BuiltinExecutorOptions
{
  std::filesystem::path executable;                   // a `prewarm` binary (run-job)
  std::optional<std::filesystem::path> manifest_file; // empty: the embedded default
  std::optional<std::filesystem::path> targets_file;  // empty: the embedded registry
  std::chrono::seconds timeout{std::chrono::minutes(30)};
};

class BuiltinExecutor final : public Executor
{
public:
  explicit BuiltinExecutor(BuiltinExecutorOptions options) : m_options(std::move(options)) {}
  std::string_view name() const override { return "builtin"; }
  bool handles(const manifest::Job& job, const manifest::ModelSpec& model) const override;
  Result<JobOutcome> run(const JobContext& context) override;

private:
  BuiltinExecutorOptions m_options;
};

} // namespace prewarm::build
