// SPDX-License-Identifier: Apache-2.0
// Ahead-of-time compilation of kernel programs for Intel GPUs that are not on
// the build host: every (target, program) pair is one ocloc compile, run on a
// job pool (--jobs), validated with `ocloc validate`, and written into a
// programs cache directory in the AOT format of
// runtime/level_zero/aot_programs.hpp (aot/<ocloc-device>/<key>.{zebin,spv,meta}
// + target.<registry name>). Output bytes depend only on the inputs and the
// ocloc version: the same build gives the same files at any --jobs.
#pragma once

#include "aot/kernel_variants.hpp"
#include "aot/ocloc.hpp"
#include "base/embedded_file.hpp"
#include "base/error.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace prewarm::aot {

struct AotTargetSpec
{
  std::string name;          // registry name, "arc-a380"
  std::string ocloc_device;  // "acm-g11"
  std::string ip_version;    // from the registry; may be empty
  std::vector<std::string> pci_ids;
  // Other targets' (IP version, PCI id): a slice requirement also names those
  // whose devices load this target's binary (aot_requirements). Not written
  // into the target record: selection serves them by IP version.
  std::vector<std::pair<std::string, std::string>> compatible_pci_ids = {};
};

// Whether the installed ocloc can compile for a target. `supported` false
// comes with the reason and a hint ("arc-b580: ocloc 22.43.24595 does not
// know 'bmg' (install a newer intel-opencl-icd / ocloc)"); never a guess.
struct AotSupport
{
  bool supported = false;
  std::string ip_version; // what ocloc says, when supported
  std::string reason;
};
Result<AotSupport> assess_target(const Ocloc& ocloc, const AotTargetSpec& target);

enum class Validation { validate, skip };

// What a program ocloc cannot compile does: fail the call (the built-in
// workload's kernels must all compile), or leave that program out with the
// reason (an application's recorded programs: one that only its own driver
// takes must not cost the others their binaries).
enum class CompileFailure { fail, leave_out };

struct AotCompileOptions
{
  unsigned jobs = 1;
  Validation validation = Validation::validate; // `ocloc validate` every zebin
  CompileFailure on_failure = CompileFailure::fail;
};

struct AotTargetReport
{
  std::string name;
  std::string ocloc_device;
  std::string ip_version;  // ocloc's
  std::string compiler;    // ocloc's OCL_DRIVER_VERSION
  std::vector<std::string> programs; // "gemm.cl [-DTILE=16 -DTRANSPOSE_B=0] -> <key12> (N bytes)"
  std::vector<std::string> left_out; // CompileFailure::leave_out: "<program>: <why>"
  std::uint64_t zebin_bytes = 0;
  std::uint64_t spirv_bytes = 0;
};

struct AotReport
{
  std::vector<AotTargetReport> targets;
  double seconds = 0;      // wall time of all compiles (+ validation)
  std::size_t compiles = 0;
};

// Compiles every variant for every target into `programs_dir` (created if
// needed). Sources come from `sources` by file name. Any unknown device,
// missing source, compile or validation failure is an error naming the
// target and program; nothing is written for a target that failed.
Result<AotReport> compile_targets(const Ocloc& ocloc,
                                  std::span<const AotTargetSpec> targets,
                                  std::span<const KernelVariant> variants,
                                  std::span<const EmbeddedFile> sources,
                                  const std::filesystem::path& programs_dir,
                                  const AotCompileOptions& options);

} // namespace prewarm::aot
