// SPDX-License-Identifier: Apache-2.0
// Intel's driver (NEO) posing as a GPU this host does not have. With its
// debug keys NEO runs with no GPU at all (no /dev/dri): the command stream
// receiver of an AUB-file build, the target's hardware info, the target's
// PCI id. Programs build through the real compiler and the real compiler
// cache: each clBuildProgram writes the NEO cache entry the same driver
// writes on that GPU, under the same key (docs/research/intel-stack.md §2).
// Kernels never execute there (a wait may block forever, or return at once
// with memory nothing wrote, as a dpctl copy back did with NEO 26.27), so
// what runs on a virtual device only builds.
//
// The keys (NEO 26.27, checked with BinaryCacheTrace=1 on this kind of host):
//   NEOReadDebugKeys=1          read the keys below from the environment
//   SetCommandStreamReceiver=5  no hardware
//   UseAubStream=0              Debian's build has no aubstream (without it: SIGSEGV)
//   HardwareInfoOverride=1x5x4  required in no-hardware mode; the keys' hardware
//                               tables come from the product, not from it
//   UseBindlessMode=0
//   ProductFamilyOverride=<ocloc device>  takes ocloc's acronyms with their
//                               stepping: acm-g11 and dg2-g11-b1 give revision 5,
//                               "dg2" gives 8 (OverrideRevision is ignored here)
//   ForceDeviceId=<hex id>      the PCI id (CL_DEVICE_ID_INTEL reports it)
//   BinaryCacheTrace=1          (first run only) every key input beside each
//                               entry: the revision and IGC identity are read
//                               from it, not assumed
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "manifest/intel_profile.hpp"
#include "manifest/target_registry.hpp"
#include "process/environment.hpp"
#include "virtual_device/intel_root.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::virtual_device {

struct VirtualDevice
{
  std::string product; // ProductFamilyOverride: the registry's ocloc device ("bmg", "acm-g11")
  std::string pci_id;  // "0xe20b": the registry's first id for the target
  // The name the card reports (OverrideDeviceName): SYCL's persistent cache
  // keys its items by it. Empty: NEO's own for a virtual device,
  // "Intel(R) Graphics [0xe20b]", which no card reports.
  std::string device_name;
  std::string describe() const; // "bmg 0xe20b"
};

// The registry's Intel target as a virtual device; Errc::usage when it lists
// no PCI id (NEO's key hashes it: no id, no cache a host could use). Its
// device name is the key profile's (manifest/intel_profile.hpp): `named` (the
// manifest's), else the one prewarm carries for the target, else NEO's name
// for the PCI id where the registry's `device_names` (manifests/targets.yaml)
// lists it.
Result<VirtualDevice> virtual_device_for(const manifest::Target& target,
                                         const manifest::IntelProfile* named = nullptr);

// The debug keys above (NEO_CACHE_DIR and the trace are the caller's).
process::Environment virtual_device_variables(const VirtualDevice& device);

// One OpenCL C program to build: its source text and build options.
struct ReplayProgram
{
  std::string name;    // "gemm.cl", for the list and messages
  std::string source;
  std::string options;
};

struct ReplayResult
{
  std::string device_name;    // "Intel(R) Graphics [0xe20b]"
  std::string driver_version; // CL_DRIVER_VERSION, "26.27.039122"
  std::string device_id;      // "0xe20b"
  std::string ip_version;     // CL_DEVICE_IP_VERSION_INTEL as intel.ip-version spells it, "20.1.0"; empty: none
  std::string extensions;     // CL_DEVICE_EXTENSIONS
  std::size_t built = 0;
  std::vector<std::string> failed; // "<name> [<options>]: status N"
  double seconds = 0;              // wall time of the whole run
  std::string output;              // the tool's stdout and stderr
};

struct ReplayRun
{
  std::filesystem::path tool;       // prewarm-cl-replay
  std::filesystem::path work_dir;   // sources, list, vendors directory
  std::filesystem::path neo_cache;  // NEO_CACHE_DIR (created)
  bool trace = false;               // BinaryCacheTrace=1
  bool stats = false;               // NEO_CACHE_STATS=1
  process::Environment debug_keys{}; // more NEO debug keys (OverrideRevision), after the device's
  std::chrono::seconds timeout{600};
  // pinned: what every build records (intel_root.hpp); as_host: NEO sees
  // this host's libraries (tests compare NEO's own lists with libva).
  IntelRoot::HostLibraries libraries = IntelRoot::HostLibraries::pinned;
};

// prewarm-cl-replay's stdout, read (`output` kept in the result).
ReplayResult read_replay_output(std::string output);

// Builds every program on the virtual device through the root's driver.
// Errors: the tool could not run, found no device, the device is not the
// one asked for, or timed out; a program that fails to build is in `failed`.
Result<ReplayResult> replay_programs(const IntelRoot& root, const VirtualDevice& device,
                                     const std::vector<ReplayProgram>& programs, const ReplayRun& run);

// The key inputs NEO traced beside an entry (BinaryCacheTrace=1).
struct TracedKey
{
  std::string device_id;   // "0xe20b"
  std::string revision;    // "0x00" (usRevId; the PCI revision on a real GPU)
  std::string igc_identity; // "<libSize>:<libMTime>", as host/intel_compiler_identity.hpp spells it
};
// From the first *.trace file directly under `neo_cache`.
Result<TracedKey> read_traced_key(const std::filesystem::path& neo_cache);

// The driver release every slice made on the virtual device requires: the
// Intel root's (IntelRoot::driver_release), once the device a run showed
// reports it (CL_DRIVER_VERSION). A device that reports another one ran
// another ICD than the root's, and its entries are not the root's: failed,
// E_VIRTUAL_DEVICE.
Result<std::string> checked_driver_release(const IntelRoot& root, const VirtualDevice& device,
                                           const ReplayResult& shown);


// The requirements of a NEO slice made on a virtual device: the inputs of
// NEO's key it was made with, as a host's probe reports them
// (base/device_properties.hpp): the driver release, the IGC identity, PCI id
// and revision (the trace), the IP version and, for a slice holding OpenCL
// entries (.cl_cache), the extension list (the device). A host whose value
// differs is told which at install, instead of missing every entry.
enum class OpenclEntries { absent, present };
std::vector<bundle::Requirement> neo_slice_requirements(std::string_view release, const TracedKey& key,
                                                        const ReplayResult& device, OpenclEntries opencl);

// NEO_CACHE_STATS=1 counters of a cache directory (its top-level "stats":
// u64 hits, u64 misses, ...). nullopt: no stats file.
struct NeoCacheStats
{
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};
std::optional<NeoCacheStats> read_neo_cache_stats(const std::filesystem::path& neo_cache);

// The entries (*.cl_cache, *.l0_cache) below a NEO cache directory, relative paths, sorted.
std::vector<std::string> neo_cache_entries(const std::filesystem::path& neo_cache);

// prewarm-cl-replay: PREWARM_CL_REPLAY, else beside this executable, else
// in the build tree's prewarm/virtual_device/.
Result<std::filesystem::path> locate_replay_tool();
// prewarm-ze-probe-build (one Level Zero module build): the same places,
// PREWARM_ZE_PROBE_BUILD.
Result<std::filesystem::path> locate_ze_probe_tool();

// The helper programs a build job on the virtual device runs that this
// process cannot find, each as the locating function says it (what it is,
// where it was looked for, how to provide it); empty: all there, or no
// Intel root (IntelRoot::locate), so no virtual device to run them. Today
// prewarm-cl-replay (the NEO slices of built-in and recorded programs, the
// device probe of a command job); the Level Zero probe serves only
// `prewarm intel-profile`. `prewarm plan` names these per job, so that the
// plan says what the build will do.
std::vector<std::string> missing_build_helpers();

} // namespace prewarm::virtual_device
