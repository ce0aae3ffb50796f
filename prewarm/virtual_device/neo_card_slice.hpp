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
#include "manifest/target_registry.hpp"
#include "virtual_device/intel_root.hpp"
#include "virtual_device/neo_synthesis.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::virtual_device {

// What the recorder left, read before the staged directory is cleaned (its
// traces are bookkeeping no slice carries).
struct NeoRecording
{
  std::vector<neo::RecordedEntry> entries;
  std::optional<manifest::IntelProfile> profile; // nullopt: the target has none
};
Result<NeoRecording> read_neo_recording(const manifest::Target& target, const std::filesystem::path& neo_cache);

struct CardEntries
{
  std::string profile;            // the profile's file
  std::size_t entries = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::vector<std::string> skipped;
  std::vector<std::string> unknown; // "key.revision: why"
  std::string device_id; // the card's, "0xe20b"
  std::string revision;  // the card's, "0x08"
};

// Adds the card's entries under `staged_neo` (nullopt: no profile, nothing
// changed). `scratch` holds the synthesis until it is complete.
Result<std::optional<CardEntries>> add_card_entries(const IntelRoot& root, const NeoRecording& recording,
                                                      const std::filesystem::path& staged_neo,
                                                      const std::filesystem::path& scratch);

} // namespace prewarm::virtual_device
