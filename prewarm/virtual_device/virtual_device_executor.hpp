// SPDX-License-Identifier: Apache-2.0
// The builder's executor for an absent Intel target when an Intel root
// (intel_root.hpp) is on this host: besides the AOT binaries (it runs the AOT
// executor first, unchanged), it builds every program the built-in workload
// would build (the AOT list, aot/kernel_variants.hpp: the same sources and
// options the engine passes to clBuildProgram) through the real Intel driver
// posing as the target (virtual_device.hpp), and packages the driver's own
// compiler cache as the target's `neo` slice. Nothing executes there.
//
// The programs and their build options are kept beside the job's log
// (<job>.programs/programs.list + sources/): `prewarm-cl-replay
// programs.list` there builds them again on any OpenCL GPU.
//
// Hit proof: the same programs are built again, on the same virtual device,
// against a copy of the captured cache with NEO's statistics on; the job
// reports NEO's hits and misses and any entry written anew (none means every
// build was served from the slice).
//
// The NEO slice is valid for exactly what NEO's cache key hashes and the host
// can report cheaply (read from NEO's own key trace, not assumed):
//   vendor == intel
//   pci-id == <the virtual device's id>          usDeviceID
//   pci-revision == <the virtual device's>       usRevId (the PCI revision on a GPU)
//   intel.driver == <CL_DRIVER_VERSION>          the NEO release that built it
//   intel.igc == <libSize>:<libMTime>            the IGC library it loaded
// What the key also hashes and no host reports, the feature and workaround
// tables of the device, come from the driver's product tables in virtual
// mode; that a real card's give the same key is not verifiable without one.
#pragma once

#include "aot/aot_executor.hpp"
#include "aot/recorded_aot_executor.hpp"
#include "jobs/executor.hpp"
#include "virtual_device/intel_root.hpp"
#include "virtual_device/virtual_device.hpp"

#include <filesystem>
#include <optional>

namespace prewarm::virtual_device {

class VirtualDeviceExecutor final : public jobs::Executor
{
public:
  // Locates the Intel root and the build tool once; without them the
  // executor is not available (the AOT executor then takes the jobs) and
  // says why in a verbose line.
  explicit VirtualDeviceExecutor(aot::AotExecutorOptions aot_options);
  std::string_view name() const override { return "virtual-device"; }
  bool available() const { return m_root.has_value(); }
  Result<jobs::JobOutcome> run(const jobs::JobContext& context) override;

private:
  aot::AotExecutor m_aot;
  unsigned m_jobs; // parallel compiles of the card's entries (--jobs)
  std::optional<IntelRoot> m_root;
  std::filesystem::path m_tool;
};

// The same for a command workload that names the programs kind: the command
// runs once on this host with the OpenCL layer recording (the aot-recorded
// executor, whose AOT slice it keeps), and every OpenCL C program it built
// (source and options verbatim) is built again through Intel's driver posing
// as the target. The NEO entries hit where the application builds the same
// source with the same options on that GPU; a program it builds only there
// (a variant chosen by device properties, as CLBlast and OpenCV do) is not
// covered: the audit at the destination says what it compiled anyway.
class VirtualRecordedExecutor final : public jobs::Executor
{
public:
  explicit VirtualRecordedExecutor(aot::RecordedAotOptions options);
  std::string_view name() const override { return "virtual-device-recorded"; }
  bool available() const { return m_root.has_value(); } // as VirtualDeviceExecutor's
  Result<jobs::JobOutcome> run(const jobs::JobContext& context) override;

private:
  aot::RecordedAotExecutor m_recorded;
  unsigned m_jobs; // parallel compiles of the card's entries (--jobs)
  std::optional<IntelRoot> m_root;
  std::filesystem::path m_tool;
};

struct NeoSlice
{
  jobs::JobOutput output;
  std::string device;   // "virtual bmg 0xe20b rev 0x00 (NEO 26.27.039122)"
  std::string summary;
  std::string report_json;
};

// The NEO slice of the programs of a built-in job, staged under
// `work_dir`/neo-slice (exposed for tests); the card's entries are compiled
// `jobs` at a time.
Result<NeoSlice> make_neo_slice(const IntelRoot& root, const std::filesystem::path& tool,
                                const jobs::JobContext& context, unsigned jobs);
// The same for the job's programs worked out already (aot::job_variants()).
Result<NeoSlice> make_neo_slice(const IntelRoot& root, const std::filesystem::path& tool,
                                const jobs::JobContext& context, std::span<const aot::KernelVariant> variants,
                                unsigned jobs);
// The same for any list of programs (an empty list: an error, no slice).
Result<NeoSlice> make_neo_slice_of(const IntelRoot& root, const std::filesystem::path& tool,
                                   const jobs::JobContext& context, const std::vector<ReplayProgram>& programs,
                                   unsigned jobs);

} // namespace prewarm::virtual_device
