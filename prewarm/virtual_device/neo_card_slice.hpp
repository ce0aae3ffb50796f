// SPDX-License-Identifier: Apache-2.0
// The step of both virtual-device executors (virtual_device_executor.hpp,
// virtual_command.hpp) that turns a recording into the entries a card looks
// up (neo_synthesis.hpp): for a target with a key profile
// (manifests/intel-profiles/<target>.yaml), the entries synthesized for the
// card join the staged NEO directory, and the slice also accepts the card's
// PCI revision. The recorder's own entries stay: they are what the
// virtual device (its hit proof, its audit) finds, and a card never looks
// them up (its key differs), so they cost bytes, not answers. Without a
// profile the recording ships alone, and the report says a card's key differs.
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "manifest/target_registry.hpp"
#include "virtual_device/intel_root.hpp"
#include "virtual_device/neo_synthesis.hpp"
#include "virtual_device/virtual_device.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::virtual_device {

struct CardEntries
{
  std::string profile;            // the profile's file
  std::filesystem::path dir;      // where they wait: <scratch>/neo
  std::vector<std::string> paths; // relative, NEO's layout
  std::size_t entries = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::vector<std::string> skipped;
  std::vector<std::string> unknown; // "key.revision: why"
  std::vector<std::string> unknown_fields; // "key.revision": the profile's assumptions
  neo::CardKey key;
  std::string device_id; // the card's, "0xe20b"
  std::string revision;  // the card's, "0x08"
};

// An Intel target resolved once per job: its key profile (the manifest's,
// else the one compiled in, else none) and the virtual device that records
// for it (whose device name is the profile's).
struct IntelTarget
{
  const manifest::Target* target = nullptr;
  std::optional<manifest::IntelProfile> profile;
  VirtualDevice device;
};
Result<IntelTarget> resolve_intel_target(const manifest::Target& target, const manifest::IntelProfile* named);

// The one owner of a NEO recording, from the fill to the staged card
// entries, in the only order that is valid:
//   take()   after the fill, while NEO's traces are there: reads the traced
//            key, synthesizes the card's entries (a target with a profile)
//            into `scratch`, then removes the traces and NEO's bookkeeping;
//   ...      the hit proof runs on the cleaned cache (the card's entries
//            would only confuse it: the virtual device never looks them up);
//   stage()  once, after the proof: the card's entries join the cache.
// Its requirements are the virtual device's widened by the card's
// (accept_card's rule).
class NeoRecording
{
public:
  struct Request
  {
    const IntelRoot& root;
    const IntelTarget& target;
    std::string_view device_extensions; // the virtual device's CL_DEVICE_EXTENSIONS
    std::filesystem::path neo_cache;    // the fill's NEO_CACHE_DIR
    std::filesystem::path scratch;      // where the card's entries wait
    unsigned jobs;                      // parallel compiles (--jobs)
  };
  static Result<NeoRecording> take(const Request& request);

  const TracedKey& key() const { return m_key; }
  const std::optional<CardEntries>& card() const { return m_card; }
  std::uint64_t bookkeeping_removed() const { return m_bookkeeping_removed; }
  // neo_slice_requirements of the virtual device's values, widened by the card's.
  Result<std::vector<bundle::Requirement>> requirements(std::string_view release, const ReplayResult& device,
                                                        OpenclEntries opencl) const;
  // The card's entries into the cache (after the hit proof); a second call fails.
  Status stage();
  // "; card entries (...)" or "; no key profile: ..." for a job's summary.
  std::string describe() const;
  // The same for the job's JSON report: {"profile", "pci_id", "pci_revision",
  // "entries", "entry_bytes", "seconds", "skipped", "unknown"}, or null without a key profile.
  nlohmann::json report() const;

private:
  NeoRecording() = default;
  std::filesystem::path m_neo_cache;
  TracedKey m_key;
  std::optional<CardEntries> m_card;
  std::uint64_t m_bookkeeping_removed = 0;
  bool m_staged = false;
};

// The slice's requirements (neo_slice_requirements: the virtual device's
// values) widened to also accept the card's: pci-revision, intel.ip-version
// and intel.opencl-extensions ("in" the virtual device's and the card's).
// A card value the profile only assumes (listed under `unknown:`, as every
// value is until `prewarm intel-profile` measured it on a card) is not
// required at all: the slice then names that input as not known for its
// target in `prewarm inspect` (text, and `unknown_key_inputs` in --json)
// and at install (bundle::unchecked_key_inputs), instead of a requirement
// that reads as a fact. `device_extensions`: the virtual device's CL_DEVICE_EXTENSIONS.
Status accept_card(std::vector<bundle::Requirement>& requirements, const std::optional<CardEntries>& card,
                   std::string_view device_extensions);

} // namespace prewarm::virtual_device
