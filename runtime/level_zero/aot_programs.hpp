// SPDX-License-Identifier: Apache-2.0
// Ahead-of-time compiled programs for Intel GPUs, as the builder's ocloc step
// (prewarm/aot) writes them into a slice's "programs" kind and as the runtime
// serves them. The format is defined here, by its reader.
//
// Layout (inside the programs cache directory):
//   aot/<ocloc-device>/target.<name>     a target record (below), one per registry
//                                        target served by these binaries (arc-a380 and
//                                        arc-a310 share acm-g11's: same files, two records,
//                                        so two slices can be installed side by side)
//   aot/<ocloc-device>/<key>.zebin       ocloc --format zebin output
//   aot/<ocloc-device>/<key>.spv         the SPIR-V ocloc made for it (Level Zero
//                                        cannot build OpenCL C: this is the JIT fallback)
//   aot/<ocloc-device>/<key>.meta        the key text below, compared byte for byte
//                                        on load: any difference is a miss
// The "aot/" subtree lives beside the OpenCL program store's "<2 hex>/" ones
// and never collides with them (they are two hex digits).
//
// Target record, one "name value" line each, in this order:
//   format 1
//   vendor intel
//   ocloc-device acm-g11
//   ip-version 12.56.5            (from `ocloc ids`; "unknown" if ocloc did not say)
//   compiler 22.43.24595          (ocloc's OCL_DRIVER_VERSION: the NEO release)
//   pci-ids 0x56a5,0x56a6         (the devices the registry maps to this target)
//
// Program key text (AotProgramKey::canonical_text()):
//   format 1
//   kind aot
//   source-sha256 <64 lowercase hex of the OpenCL C source>
//   options <build options, verbatim>
//   vendor intel
//   ocloc-device <name>
//   ip-version <x.y.z>
//   compiler <ocloc version>
// key = lowercase hex SHA-256 of that text. Newlines in a value are written
// as "\n" so a value cannot forge another line.
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::level_zero {

inline constexpr int k_aot_format = 1;
inline constexpr std::string_view k_aot_directory = "aot";

struct AotTarget
{
  std::string ocloc_device;
  std::string ip_version;
  std::string compiler;
  std::vector<std::string> pci_ids; // lowercase "0x56a5", sorted
  std::filesystem::path dir;        // the aot/<ocloc-device> directory it was read from
                                    // (not part of the text)

  std::string to_text() const;
  // Strict: every line, in order, nothing else (Errc::verify E_AOT_TARGET).
  static Result<AotTarget> parse(std::string_view text);
};

struct AotProgramKey
{
  std::string source_sha256;
  std::string options;
  std::string ocloc_device;
  std::string ip_version;
  std::string compiler;

  static AotProgramKey for_target(const AotTarget& target, std::string_view source, std::string_view options);
  std::string canonical_text() const;
  std::string digest() const;
};

// One NEO release, two spellings: ocloc's OCL_DRIVER_VERSION and OpenCL's
// CL_DRIVER_VERSION zero-pad the build ("26.27.039122"), Level Zero's encoded
// driverVersion cannot ("26.27.39122"; 22.43.24595 had no padding to lose).
// Each dot-separated number without its leading zeros.
//
// NEO's Level Zero driver does not report the release at all: its
// driverVersion is its own version with the release's build number,
// (1 << 24 | 3 << 16 | build), "1.3.39122" for release 26.27.39122 (measured
// on the real 26.27 driver; zeIntelGetDriverVersionString says "1.15.39122",
// and Debian 12's intel-level-zero-gpu package is versioned 1.3.24595 for
// release 22.43.24595). The build number is what the two spellings share,
// and NEO's build numbers grow with every release, so a Level Zero version
// and a release name the same driver when their builds are equal.
std::string unpadded_release(std::string_view version);
// A version whose first number is below 19 (NEO releases are years: 19.x
// and later): Level Zero's driver version.
bool is_level_zero_driver_version(std::string_view version);
bool same_release(std::string_view a, std::string_view b);
// Every spelling a host may report for one release, for a slice requirement
// `intel.driver in ...`: as given, unpadded, and NEO's Level Zero driver
// version "1.3.<build>" (a host probed through Level Zero only: SYCL and IPEX
// images). "1.3" measured on 26.27 (driverVersion 0x010398d2); Debian 12's
// 22.43 driver library is named libze_intel_gpu.so.1.3.24595 (not read
// through the API: that driver does not start without a GPU).
std::vector<std::string> release_spellings(std::string_view release);

// Whether a zebin compiled for IP `binary_ip` by ocloc `compiler` is one the
// driver also loads on a device of IP `device_ip` (the compatibility rules
// AotPrograms::select applies; not the binary's own IP).
bool loads_also_on(std::string_view binary_ip, std::string_view compiler, std::string_view device_ip);

struct AotProgram
{
  std::string key;
  std::string zebin;
  std::string spirv; // may be empty if the file is missing
};

// Which target serves a device; `target` is null when none does, and
// `reason` says why ("no AOT target lists pci-id 0x56a0 (targets: acm-g11 ...)").
struct AotSelection
{
  const AotTarget* target = nullptr;
  std::string reason;
};

struct AotLookup
{
  std::optional<AotProgram> program;
  std::string reason; // why not, for a miss
};

class AotPrograms
{
public:
  // Reads every aot/*/target.* under `programs_dir`. An absent directory is an
  // empty set; a malformed target record is an error (it came from a verified
  // slice, so it is a bug or tampering, not a miss).
  static Result<AotPrograms> open(const std::filesystem::path& programs_dir);

  const std::vector<AotTarget>& targets() const { return m_targets; }

  // vendor must be intel, the device's pci-id must be listed by a target, and
  // the device's intel.driver (when reported) must equal the target's compiler
  // version: a zebin is made by one IGC/NEO, and the driver that loads it is
  // only promised to understand its own. Where the device reports its
  // intel.ip-version (the stepping is its last number), a listed target of
  // another IP version is passed over, and a target the driver's
  // compatibility rules let load on that IP is taken when none lists the
  // device (dg2-g10-c0 on dg2-g11-b1 and dg2-g12-a0, bmg-g21 on bmg-g31 and
  // lnl-b0, mtl-u-b0 on mtl-h-b0, ptl-h-b0 on ptl-u; compilers from 24.26).
  AotSelection select(const DeviceProperties& device) const;

  // The program for `source` + `options` under `target`: a miss when there
  // is no such entry or its meta text differs.
  AotLookup find(const AotTarget& target, std::string_view source, std::string_view options) const;

  // SPIR-V for `source` + `options` from any target (the JIT fallback when the
  // host's device has no target here); empty if none.
  std::string find_any_spirv(std::string_view source, std::string_view options) const;

private:
  std::vector<AotTarget> m_targets;
};

} // namespace prewarm::level_zero
