// SPDX-License-Identifier: Apache-2.0
// The builder's executor for strategy "aot": a built-in workload for an
// Intel target that is absent on this host is compiled with ocloc for the
// target's device, every kernel program the run path would build at the job's
// precision and shapes (kernel_variants.hpp). The output is one slice staging directory
// holding programs/aot/<ocloc-device>/..., valid for:
//   vendor == intel
//   pci-id in <the registry's ids for the target>
//   intel.driver == <ocloc's OCL_DRIVER_VERSION>   (the zebin's compiler; NEO only
//                                                  promises to load its own; "in" both
//                                                  spellings where it is zero-padded:
//                                                  26.27.039122,26.27.39122)
// The IP version is recorded in the target record, not required: drivers of
// this generation (NEO 22.43) do not report it, and an unreported property
// fails every requirement.
#pragma once

#include "aot/aot_compiler.hpp"
#include "aot/ocloc.hpp"
#include "aot/toolchains.hpp"
#include "jobs/executor.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <vector>

namespace prewarm::aot {

struct AotExecutorOptions
{
  unsigned jobs = 1;                          // parallel ocloc compiles (--jobs)
  Validation validation = Validation::validate;
};

class AotExecutor final : public jobs::Executor
{
public:
  explicit AotExecutor(AotExecutorOptions options) : m_options(options) {}
  std::string_view name() const override { return "aot"; }
  Result<jobs::JobOutcome> run(const jobs::JobContext& context) override;
  // run() with the job's programs worked out already (job_variants()): the
  // virtual device builds the same list on its driver.
  Result<jobs::JobOutcome> run_variants(const jobs::JobContext& context, std::span<const KernelVariant> variants);

private:
  AotExecutorOptions m_options;
  ToolchainChooser m_toolchains; // located at the first job; per target, the first ocloc that knows it
};

// The programs a built-in job's workload builds at its precision, shapes and
// coverage (kernel_variants.hpp); an internal error for a model without an
// architecture.
Result<std::vector<KernelVariant>> job_variants(const jobs::JobContext& context);

// The slice requirements of an AOT output (see the file comment).
std::vector<bundle::Requirement> aot_requirements(const AotTargetSpec& target, const std::string& compiler);

// The registry's Intel target as the AOT compiler takes it; an error when
// the registry lists no PCI ids (no host could ever select its binaries).
Result<AotTargetSpec> aot_target_spec(const manifest::Target& target);

// The per-job report fields every AOT job has: target, ocloc device, IP
// version, compiler, programs, zebin and SPIR-V bytes, compile time.
nlohmann::json aot_target_json(const AotTargetReport& target, double compile_seconds);

} // namespace prewarm::aot
