// SPDX-License-Identifier: Apache-2.0
// NEO cache entries for a card, made from what the virtual device recorded.
// The virtual device (virtual_device.hpp) builds every program once with
// BinaryCacheTrace=1: each entry NEO writes comes with its key inputs
// (neo_cache_key.hpp). A real card hashes some inputs the virtual device
// never has (docs/research/neo-cache-key.md §2): the OpenCL `-cl-ext=` list
// (cl_khr_pci_bus_info, libva's media sharing), Level Zero bindless mode, the
// PCI id and revision, the IP version. So, per recorded entry and per
// target's key profile (manifest/intel_profile.hpp):
//   1. the card's internal options: the recorded ones with the `-cl-ext=`
//      list NEO appended replaced by the one NEO constructs from the card's
//      device extension list and the program's options
//      (neo_extension_list.hpp); the card's list is the virtual device's
//      CL_DEVICE_EXTENSIONS (or the profile's measured one) with the
//      profile's extensions placed as NEO lists them. The construction must
//      give the recorded list back from the virtual device's own extensions
//      first, or the entry is skipped. For Level Zero the bindless options
//      go before -ze-intel-has-buffer-offset-arg (module_imp.cpp:197,1206-1207);
//   2. ocloc of the Intel root compiles the recorded input (OpenCL C source,
//      or the SPIR-V NEO hashed) with the recorded options and the card's
//      internal options for the card's IP version (`-device A.R.S`), bindful
//      unless those options ask for bindless (ocloc 26.27 would add bindless
//      mode on BMG, DG2 and MTL by itself: offline_compiler.cpp:1513-1518);
//   3. the binary is the entry as is: 26.27's IGC returns a zebin, which NEO
//      stores unwrapped (device_binary_formats.h:176-184,
//      compiler_interface.cpp packAndCacheBinary);
//   4. its name is NEO's hash over the recorded inputs with the card's
//      PLATFORM device id and revision, IP version and internal options
//      (the IGC identity and input are the recorder's: the same packages).
// An extension listed only where libva.so.2 loads gives two entries per
// OpenCL program (with and without): which one a host uses depends on it.
// Where the program's source never names those extensions, both names get
// the binary of one compile (ocloc gives the same bytes either way).
// The method is checked against NEO itself (tests/integration/intel_synth):
// for the recorder's own configuration the synthesized names and bytes equal
// NEO's, and for another configuration NEO runs here they are all hits.
#pragma once

#include "aot/ocloc.hpp"
#include "base/error.hpp"
#include "manifest/intel_profile.hpp"
#include "virtual_device/neo_cache_key.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::virtual_device::neo {

// The key inputs a card reports where the virtual device's may differ.
struct CardKey
{
  std::string target;
  std::uint16_t device_id = 0;
  std::uint16_t revision = 0;
  IpVersion ip_version;
  std::optional<std::array<std::uint8_t, 8>> feature_table;    // nullopt: the recorder's
  std::optional<std::array<std::uint8_t, 4>> workaround_table; // nullopt: the recorder's
  bool opencl_bindless = false;
  bool level_zero_bindless = false;
  std::vector<manifest::AddedExtension> opencl_extensions;
  // The virtual device's CL_DEVICE_EXTENSIONS names (what the recording's
  // lists were made of), and the card's: one list, or two (without, with
  // the extensions listed only where libva.so.2 loads).
  std::vector<std::string> recorder_extensions;
  std::vector<std::vector<std::string>> extension_lists;
};
// `recorder_extensions`: the virtual device's CL_DEVICE_EXTENSIONS. Errors
// name the profile field whose anchor that list lacks.
Result<CardKey> card_key(const manifest::IntelProfile& profile, std::string_view recorder_extensions);

// The card's internal options for one recorded entry (its internal and API
// options): one string, or two (without, with libva). Errc::failed when NEO's
// construction does not give the recorded list back from the virtual
// device's extensions (the entry is then left out, with this reason).
Result<std::vector<std::string>> card_internal_options(std::string_view recorded, std::string_view options,
                                                       CacheApi api, const CardKey& card);

// The card's CL_DEVICE_EXTENSIONS (one, or without/with libva's) from a
// device's list, by the same rule as card_key's.
Result<std::vector<std::string>> card_extension_lists(std::string_view device_extensions, const CardKey& card);

// An entry NEO wrote, with its traced key inputs.
struct RecordedEntry
{
  TracedEntry traced;
  CacheApi api = CacheApi::opencl;
  std::string path; // relative to the cache directory: "1/d/1d8e...cl_cache"
};
// Every traced entry under `cache_dir` (the API from the file NEO wrote
// beside the trace); `ip_version` is the recorder's (the trace omits it).
Result<std::vector<RecordedEntry>> recorded_entries(const std::filesystem::path& cache_dir, IpVersion ip_version);

// The recorded inputs as the card hashes them (one per internal-options variant).
Result<std::vector<KeyInputs>> card_inputs(const RecordedEntry& recorded, const CardKey& card);

struct SynthesisResult
{
  std::vector<std::string> entries; // written, relative paths, in recorded order
  std::vector<std::string> skipped; // "<recorded name>: why"
  std::uint64_t bytes = 0;
  double seconds = 0;
};

// Compiles every recorded entry for the card and writes the entries under
// `out_dir` in NEO's layout. An entry ocloc cannot compile is skipped with
// ocloc's message (the card compiles that program itself), and so are
// entries with specialisation constants (ocloc takes them as a file of
// 64-bit values, NEO hashes the caller's sizes: not reproduced here).
// Up to `jobs` ocloc compiles run at once (the build's --jobs); the result
// is the same at any count.
Result<SynthesisResult> synthesize(const aot::Ocloc& ocloc, const std::vector<RecordedEntry>& recorded,
                                   const CardKey& card, const std::filesystem::path& out_dir, unsigned jobs);

} // namespace prewarm::virtual_device::neo
