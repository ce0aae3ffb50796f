// SPDX-License-Identifier: Apache-2.0
// The builder's executor for strategy "aot" of a command workload that names
// the programs kind (manifest/plan.hpp records_programs): the command runs
// once on this host's own OpenCL device (PoCL on a CPU-only runner) with the
// OpenCL layer recording (runtime/layer), and every OpenCL C program it
// built (store::recorded_sources: source + build options) is compiled with
// ocloc for the absent Intel target, validated, and written in the AOT
// programs format (runtime/level_zero/aot_programs.hpp) under the slice's
// programs/aot/<ocloc-device>/. The slice carries the same requirements as a
// built-in workload's AOT slice (aot_requirements: vendor, pci-id, the
// compiler as intel.driver); on such a host prewarm-runtime enables the
// layer, which hands the zebins to clCreateProgramWithBinary.
//
// One recording serves every absent Intel target of the same model and
// precision (the first job to need it runs the command; the others wait for
// it). A program ocloc cannot compile is left out with the reason; the
// others still ship.
#pragma once

#include "aot/aot_compiler.hpp"
#include "aot/ocloc.hpp"
#include "aot/toolchains.hpp"
#include "base/files.hpp"
#include "jobs/executor.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace prewarm::aot {

struct RecordedAotOptions
{
  unsigned jobs = 1;
  Validation validation = Validation::validate;
};

class RecordedAotExecutor final : public jobs::Executor
{
public:
  explicit RecordedAotExecutor(RecordedAotOptions options) : m_options(options) {}
  std::string_view name() const override { return "aot-recorded"; }
  Result<jobs::JobOutcome> run(const jobs::JobContext& context) override;

  // The program store the job's command recorded (made by the first caller
  // for its model and precision): the virtual-device executor builds the
  // same programs through Intel's driver (prewarm/virtual_device).
  Result<std::filesystem::path> recorded_program_store(const jobs::JobContext& context);

private:
  struct Recording
  {
    std::once_flag once;
    std::optional<Result<std::filesystem::path>> store; // the recorded program store
    std::string summary;                                // "command ... in 3.2 s"
  };

  // The recording for the job's model and precision, made by the first
  // caller.
  Recording& recording_for(const jobs::JobContext& context);

  RecordedAotOptions m_options;
  std::mutex m_mutex;
  std::optional<TempDir> m_scratch;
  std::map<std::string, std::unique_ptr<Recording>> m_recordings;
  ToolchainChooser m_toolchains; // per target, the first ocloc that knows it (toolchains.hpp)
};

} // namespace prewarm::aot
