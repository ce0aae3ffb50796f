// SPDX-License-Identifier: Apache-2.0
// An Intel key profile: the inputs of NEO's compiler-cache key (and of
// SYCL's device string) that one Intel target's card reports, each with
// where it comes from. The virtual device records a program's key inputs;
// synthesis (prewarm/virtual_device/neo_synthesis.hpp) replaces the ones a
// card reports differently with the profile's, compiles with ocloc and names
// the entry with NEO's hash. Files: manifests/intel-profiles/<target>.yaml
// (compiled in; a manifest target may name another file). What the key
// hashes: docs/research/neo-cache-key.md §1, §5.
//
// File format (version 1; every key required unless marked optional):
//   version: 1
//   target: NAME                      the registry's target (manifests/targets.yaml)
//   recorder:                         the virtual device that records for this card
//     product: NAME                   ProductFamilyOverride (an ocloc acronym or dotted IP)
//     device_id: "0xNNNN"             ForceDeviceId
//   driver:                           the packages the values hold for (NEO hashes
//     packages: {NAME: VERSION, ...}  libigc's size and mtime: pin these)
//     source: TEXT
//   key:                              the card's values of the hashed PLATFORM/ipVersion
//     device_id:  VALUE "0xNNNN"      usDeviceID
//     revision:   VALUE "0xNN"        usRevId (the PCI revision)
//     ip_version: VALUE "A.R.S"       hwInfo.ipVersion (CL_DEVICE_IP_VERSION_INTEL)
//     feature_table:    VALUE         "virtual-device" (the recorder's traced bytes)
//     workaround_table: VALUE           or 8 / 4 bytes as NEO's trace prints them ("b3.39.")
//   opencl:
//     bindless: VALUE true|false      adds -cl-intel-use-bindless-mode ... to the key
//     extensions:                     the card's -cl-ext list: the recorder's, plus
//       add:                          (list, may be empty)
//         - name: cl_...              the extension
//           after: cl_...|end         where NEO lists it: after that extension, or
//                                     after the last extension ("end", before any
//                                     __opencl_c_ feature)
//           when: always|libva        libva: only where libva.so.2 loads on the host
//                                     (synthesis makes both variants)
//           source: TEXT
//       measured: VALUE TEXT      (optional) the card's CL_DEVICE_EXTENSIONS as
//                                 `prewarm intel-profile` read it: the list a
//                                 slice's intel.opencl-extensions is made from
//   level_zero:
//     bindless: VALUE true|false
//   device_name: VALUE TEXT           CL_DEVICE_NAME / ze name (SYCL's cache key)
//   unknown:                          (optional) values no source settles
//     - field: PATH                   "key.revision"
//       why: TEXT
// VALUE is a map {value: SCALAR, source: TEXT}: the source is a NEO file:line,
// "measured on a card", or "virtual device trace" (NEO's own table, where the
// card and the virtual device agree). Unknown keys are errors, as in manifests.
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::manifest {

struct ProfileValue
{
  std::string value;
  std::string source;
};

struct ProfileBool
{
  bool value = false;
  std::string source;
};

struct AddedExtension
{
  enum class When { always, libva };
  std::string name;
  std::string after; // an extension name, or "end"
  When when = When::always;
  std::string source;
};

struct UnknownValue
{
  std::string field;
  std::string why;
};

struct IntelProfile
{
  std::string source_name; // file or "<embedded NAME.yaml>", for messages
  std::string target;
  std::string recorder_product;
  std::string recorder_device_id;
  std::map<std::string, std::string> packages;
  std::string packages_source;
  ProfileValue device_id;
  ProfileValue revision;
  ProfileValue ip_version;
  ProfileValue feature_table;    // "virtual-device" or "xx.xx.xx.xx.xx.xx.xx.xx."
  ProfileValue workaround_table; // "virtual-device" or "xx.xx.xx.xx."
  ProfileBool opencl_bindless;
  std::vector<AddedExtension> opencl_extensions_added;
  std::optional<ProfileValue> opencl_extensions_measured;
  ProfileBool level_zero_bindless;
  ProfileValue device_name;
  std::vector<UnknownValue> unknown;
};

inline constexpr std::string_view k_table_from_virtual_device = "virtual-device";

// Errors: Errc::usage E_MANIFEST "FILE:LINE:COL: FIELD: what".
Result<IntelProfile> parse_intel_profile(std::string_view text, std::string source_name);
Result<IntelProfile> load_intel_profile(const std::filesystem::path& file);
// manifests/intel-profiles/<target>.yaml as compiled in; nullopt: no profile for it.
Result<std::optional<IntelProfile>> embedded_intel_profile(std::string_view target);

} // namespace prewarm::manifest
