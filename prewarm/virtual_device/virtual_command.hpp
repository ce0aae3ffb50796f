// SPDX-License-Identifier: Apache-2.0
// The user's own warm-up command on a virtual Intel device: for an absent
// Intel target, a command workload whose kinds name `neo` or `sycl` (and
// not `programs`, which the recording executors take) runs under the Intel
// root's loader with Intel's driver posing as the target
// (virtual_device.hpp), NEO_CACHE_DIR and SYCL_CACHE_DIR (persistent) in
// staging. Whatever the application compiles there, through OpenCL, Level
// Zero or SYCL (whose device images are JIT-compiled by the same driver),
// lands in the two caches, which become the target's `neo` and `sycl` slices.
//
// Kernels never execute there, and an application waiting on a result may
// block forever or read garbage. So the run has a deadline: the workload's
// timeout, at most PREWARM_VIRTUAL_DEADLINE seconds (default 120). A run
// stopped by the deadline keeps what it compiled until then; an entry cut
// off mid-write (a SYCL item whose .lock remains) is dropped whole. Such a
// run is a verdict, not a success: it did not finish, what it built, and
// that it probably missed what it would have compiled later (OpenVINO's GPU
// plugin spins after its constant-folding kernels); it is a warning, and
// under `verify: require` a failed job. No hit proof runs after it: the
// proof would stop at the same point and pay the deadline a second time.
// Nothing of what the application printed or computed is trusted: only the
// caches are kept, and they are what the real driver wrote.
//
// The model's custom caches (`caches:`, command/custom_capture.hpp: OpenVINO's
// CACHE_DIR) are captured as on this host, each variable pointed into
// staging, and become one slice with the SYCL slice's requirements: what the
// program compiled there was for this device and driver.
//
// The command's program (argv[0], looked up in PATH) must be an ELF
// executable that runs on the root's glibc: the root's own Python or a
// virtual environment of it (./setup.sh intel-sycl makes ROOT/opt/prewarm-sycl
// with Intel's SYCL runtime and dpctl from PyPI). A shell, or a program the
// command starts itself, runs on the host's loader and cannot load the
// driver: a shell workload is refused.
//
// Measured choices (NEO 26.27, intel-sycl-rt 2026.2.0, dpctl 0.22.1):
//   - Level Zero through the SYCL runtime's v2 adapter fails on the virtual
//     device: urContextCreate gets ZE_RESULT_ERROR_UNINITIALIZED from
//     zeContextMakeMemoryResident (no memory manager without hardware). The
//     run sets UR_LOADER_USE_LEVEL_ZERO_V2=0 (the v1 adapter works).
//   - SYCL's persistent cache keys an item by "<platform name>/<device
//     name>/<IP version>/<driver version>" (its .src file). The virtual device
//     names itself "Intel(R) Graphics [0xe20b]"; NEO's own name for the PCI id
//     on a real card is set with OverrideDeviceName: the target's key
//     profile's (virtual_device.hpp virtual_device_for). The
//     platform name is the v1 adapter's ("... over
//     Level-Zero"); where an application uses the v2 adapter (2026.2 picks it
//     by default for the virtual B580) the SYCL item misses there and the NEO entry of the same
//     SPIR-V build is what can hit. Not verifiable without the card.
//
// Hit proof (command/proof_rerun.hpp, unless `verify: off`): the
// command runs again on the same virtual device against copies of every
// cache with NEO_CACHE_STATS=1 and SYCL_CACHE_TRACE=1; the job reports NEO
// hits and misses, SYCL items loaded from the cache, and any entry written
// anew (a warning; under `verify: require` a failed job).
#pragma once

#include "base/error.hpp"
#include "jobs/executor.hpp"
#include "manifest/manifest.hpp"
#include "virtual_device/intel_root.hpp"
#include "virtual_device/virtual_device.hpp"

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::virtual_device {

inline constexpr std::string_view k_deadline_variable = "PREWARM_VIRTUAL_DEADLINE";
inline constexpr std::chrono::seconds k_default_deadline{120};

struct CommandRun
{
  std::vector<std::string> argv;                 // argv[0] resolved to a path
  std::filesystem::path working_directory;       // empty: ours
  std::map<std::string, std::string> environment; // the workload's, added
  std::filesystem::path neo_cache;
  std::filesystem::path sycl_cache;
  std::filesystem::path log_file;                // the command's output is appended
  std::filesystem::path vendors_dir;             // the ICD loader's vendors directory (made)
  std::chrono::seconds deadline{k_default_deadline};
  bool trace = false; // BinaryCacheTrace=1
  bool proof = false; // NEO_CACHE_STATS=1, SYCL_CACHE_TRACE=1
};

struct CommandRunResult
{
  bool deadline_reached = false;
  std::string ending;       // "exited with status 0", "timed out after 120.0 s ..."
  double seconds = 0;
  std::size_t sycl_hits = 0; // "[Persistent Cache]: using cached device binary" lines
};

// Runs the command once on the virtual device. An error only when it could
// not start; its exit status and the deadline are in the result.
Result<CommandRunResult> run_command(const IntelRoot& root, const VirtualDevice& device, const CommandRun& run);

// SYCL persistent-cache items (<hashes>/<n>.bin), relative paths, sorted.
std::vector<std::string> sycl_cache_items(const std::filesystem::path& sycl_cache);

// Drops every item whose write the deadline cut off (its <n>.lock remains):
// the lock and the item's files. Returns how many.
std::size_t drop_interrupted_sycl_items(const std::filesystem::path& sycl_cache);

class VirtualCommandExecutor final : public jobs::Executor
{
public:
  // `compile_jobs`: how many of the card's entries are compiled at once (--jobs).
  explicit VirtualCommandExecutor(unsigned compile_jobs);
  std::string_view name() const override { return "virtual-device-command"; }
  // Whether an Intel root was found: without one no job runs here.
  bool available() const { return m_root.has_value(); }
  Result<jobs::JobOutcome> run(const jobs::JobContext& context) override;

private:
  std::optional<IntelRoot> m_root;
  unsigned m_compile_jobs;
};

} // namespace prewarm::virtual_device
