// SPDX-License-Identifier: Apache-2.0
// Intel's offline compiler (ocloc, intel-opencl-icd) as a library: which
// devices it knows, compile OpenCL C for ONE named device into a zebin, and
// `ocloc validate` a zebin. ocloc needs no GPU (its help says so; checked with
// 22.43.24595 on a machine without one).
//
// Facts about ocloc 22.43 (Debian bookworm) this code relies on:
//   - `ocloc query OCL_DRIVER_VERSION` writes the version to a FILE named
//     OCL_DRIVER_VERSION in the working directory (stdout stays empty);
//   - `ocloc ids <name>` exits 0 and prints "Matched ids:\n<ip version>" for a
//     known device, and non-zero "Unknown acronym" otherwise (it does not
//     accept PCI ids, although `compile -device 0x56a5` does);
//   - the default output format is patchtokens; `--format zebin` gives the
//     zebin that `ocloc validate` and Level Zero's NATIVE format take;
//   - `-output X -output_no_suffix` names the binary X and the SPIR-V X.spv;
//   - the same source, options and device give the same bytes (tested).
// What 26.27.039122 (Debian sid, the Intel root of toolchains.hpp) does
// differently, each handled here:
//   - `-output X -output_no_suffix` writes X.bin (and X.spv); without
//     -output_no_suffix it is X_<device>.bin;
//   - every good compile prints "Build succeeded.";
//   - `query OCL_DRIVER_VERSION` prints the version as well as writing the
//     file, and the version has a six-digit build: "26.27.039122", the same
//     string its OpenCL driver reports as CL_DRIVER_VERSION;
//   - zebins carry a .note.intelgt.metrics section that `validate` warns
//     about ("Unhandled SHT_NOTE section") and still calls VALID;
//   - a hex PCI id as -device picks the A0 stepping unless -revision_id is
//     given (`-device 0x56a5` is dg2-g11-a0, 12.56.0; with -revision_id 5 it
//     is acm-g11 = dg2-g11-b1, 12.56.5): the registry names acronyms with
//     their stepping, never bare PCI ids (target_registry.hpp).
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace prewarm::aot {

struct OclocDevice
{
  std::string name;        // as asked, e.g. "acm-g11"
  bool known = false;
  std::string ip_version;  // "12.56.5" when known
  std::string reason;      // when unknown: ocloc's message
};

enum class OclocInput { opencl_c, spirv, llvm_bitcode };

struct OclocCompileRequest
{
  std::string source_name; // "gemm.cl", for messages only (never a path on disk)
  std::string_view source; // OpenCL C (or the IR `input` names)
  std::string options;     // build options, e.g. "-DTILE=16"
  std::string device;      // ONE ocloc device name; lists and ranges are refused
  std::string internal_options{}; // -internal_options: the driver's own (NEO's cache key hashes them)
  // -stateful_address_mode: "bindful" keeps 26.27's ocloc from adding bindless
  // mode on BMG, DG2 and MTL (offline_compiler.cpp:1513-1518), which NEO's
  // OpenCL does not use; empty: ocloc's default.
  std::string stateful_address_mode{};
  OclocInput input = OclocInput::opencl_c;
};

struct OclocOutput
{
  std::string zebin;  // the device binary (ELF, e_machine 205)
  std::string spirv;  // the SPIR-V ocloc made on the way (device-dependent: it is
                      // not shared between targets)
  std::string log;    // ocloc's messages (warnings), usually empty
};

struct OclocValidation
{
  bool valid = false;
  int exit_code = -1; // a normal exit's status; -1 when ocloc was killed
  std::string output; // ocloc's report; on 22.43 it warns ".ze_info Minor version : 20
                      // is newer than available in decoder : 15" (IGC vs NEO skew, harmless)
  std::string reason; // of a rejection, one line: what ocloc lists under "Validator detected
                      // errors", else its last line (its warnings come first and are not the reason)
};

class Ocloc
{
public:
  // The executable: $PREWARM_OCLOC if set (it must exist), else `ocloc` on
  // PATH, else /usr/bin/ocloc. Also queries the version, so a broken install
  // fails here rather than in the middle of a build.
  static Result<Ocloc> locate();
  static Result<Ocloc> at(const std::filesystem::path& executable);

  const std::filesystem::path& executable() const { return m_executable; }
  // OCL_DRIVER_VERSION, "22.43.24595": the NEO release the compiler belongs to,
  // recorded with every binary it makes.
  const std::string& driver_version() const { return m_driver_version; }

  // Whether this ocloc can compile for `name` (an acronym such as "acm-g11").
  // An unknown device is a result (known = false, reason), not an error.
  Result<OclocDevice> lookup_device(std::string_view name) const;

  // One source for one device; thread-safe (every call has its own scratch
  // directory). A compile error is Errc::failed carrying ocloc's build log.
  // In a build, one ocloc run per distinct input (shared_ocloc_runs.hpp),
  // for compile_spirv and validate too.
  Result<OclocOutput> compile(const OclocCompileRequest& request) const;

  // SPIR-V only (`-spv_only`), for Level Zero's IL path. `device` selects the
  // front end's target defines; the result is not a device binary.
  Result<std::string> compile_spirv(const OclocCompileRequest& request) const;

  // `ocloc validate -file X -device D`. Only zebins are understood
  // (patchtokens: "Input is not a Zebin file").
  Result<OclocValidation> validate(std::string_view zebin, std::string_view device) const;

private:
  Result<OclocValidation> run_validate(std::string_view zebin, std::string_view device) const;
  Ocloc(std::filesystem::path executable, std::string driver_version)
    : m_executable(std::move(executable)), m_driver_version(std::move(driver_version))
  {
  }

  std::filesystem::path m_executable;
  std::string m_driver_version;
};

// A device name ocloc can take for exactly one target: letters, digits, '-',
// '_', '.' (IP versions). Lists (","), ranges (":") and anything a shell or
// ocloc would split are refused, so one compile is always one target.
bool is_single_device_name(std::string_view name);

// The host's own ocloc: `ocloc` on PATH, else /usr/bin/ocloc (PREWARM_OCLOC
// is not read here; toolchains.hpp orders the choices).
std::optional<std::filesystem::path> find_host_ocloc();

} // namespace prewarm::aot
