// SPDX-License-Identifier: Apache-2.0
// The step of the virtual-device executors that turns a recording into the
// entries a card looks up (neo_synthesis.hpp): for a target with a key
// profile (manifests/intel-profiles/<target>.yaml), the entries synthesized
// for the card join the staged NEO directory, and the slice also accepts the
// card's PCI revision. The recorder's own entries stay: they are what the
// virtual device (its hit proof, its audit) finds, and a card never looks
// them up (its key differs), so they cost bytes, not answers. Without a
// profile the recording ships alone, and the report says a card's key differs.
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "manifest/target_registry.hpp"
#include "virtual_device/intel_root.hpp"
#include "virtual_device/neo_synthesis.hpp"

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
  neo::CardKey key;
  std::string device_id; // the card's, "0xe20b"
  std::string revision;  // the card's, "0x08"
};

// Reads the recording NEO left in `neo_cache` (entries and their traces:
// call it before the traces are cleaned away) and synthesizes the card's
// entries under `scratch` (nullopt: the target has no key profile).
// The profile: the one the manifest names for the target (`named`), else
// the one compiled in (manifests/intel-profiles/<target>.yaml). Up to
// `jobs` compiles at once (the build's --jobs).
Result<std::optional<CardEntries>> synthesize_card_entries(const IntelRoot& root, const manifest::Target& target,
                                                           const manifest::IntelProfile* named,
                                                           const std::filesystem::path& neo_cache,
                                                           const std::filesystem::path& scratch, unsigned jobs);
// Moves them into the staged NEO directory (after the virtual device's hit
// proof, which they would only confuse: the virtual device never looks them up).
Status stage_card_entries(const std::optional<CardEntries>& card, const std::filesystem::path& neo_cache);

// The slice's requirements (neo_slice_requirements: the virtual device's
// values) widened to also accept the card's: pci-revision, intel.ip-version
// and intel.opencl-extensions ("in" the virtual device's and the card's).
// `device_extensions`: the virtual device's CL_DEVICE_EXTENSIONS.
Status accept_card(std::vector<bundle::Requirement>& requirements, const std::optional<CardEntries>& card,
                   std::string_view device_extensions);

// "; card entries (...)" or "; no key profile: ..." for a job's summary.
std::string describe(const std::optional<CardEntries>& card);
// The same for the job's JSON report, as JSON text: {"profile", "pci_id",
// "pci_revision", "entries", "entry_bytes", "seconds", "skipped", "unknown"},
// or null without a key profile.
std::string report_json(const std::optional<CardEntries>& card);

} // namespace prewarm::virtual_device
