// SPDX-License-Identifier: Apache-2.0
// The target registry: friendly GPU names a manifest can list under
// `targets:` -> vendor, PCI ids, ocloc device (Intel) or SM (NVIDIA), or the
// OpenCL CPU device. The data lives in manifests/targets.yaml (embedded in the
// binary; `--targets FILE` replaces it), parsed with the manifest's strictness.
//
// File format (version 1):
//   version: 1
//   targets:
//     NAME:                      [a-z0-9][a-z0-9.-]*
//       vendor: cpu|nvidia|intel
//       description: TEXT
//       sm: INT                  nvidia only, required (major*10 + minor)
//       ocloc_device: NAME       intel only, required (`ocloc -device` name; an
//                                acronym, never a bare PCI id: ocloc takes "0x56a5"
//                                as the A0 stepping, which retail cards are not)
//       ip_version: X.Y.Z        intel only, optional (`ocloc ids NAME`; Z is the stepping)
//       pci_revision: "0xNN"     intel only, optional: the PCI revision id of the
//                                stepping ocloc_device builds for (lowercase, 2 hex digits)
//       pci_ids: ["0xabcd", ...] nvidia/intel, optional, lowercase, unique
//       device_names: {"0xabcd": TEXT}  intel only, optional: the name the
//                                driver reports for that PCI id (NEO's device
//                                table); each key one of pci_ids
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::manifest {

enum class Vendor { cpu, nvidia, intel };
std::string_view to_string(Vendor vendor);

struct Target
{
  std::string name;
  Vendor vendor = Vendor::cpu;
  std::string description;
  std::vector<std::string> pci_ids; // "0x56a5"
  std::string ocloc_device;         // intel: "acm-g11"
  std::string ip_version;           // intel: "12.56.5", empty when not recorded
  std::string pci_revision;         // intel: "0x05" (DG2-G11 B1), empty when not recorded
  int sm = 0;                       // nvidia: 90
  std::map<std::string, std::string> device_names; // intel: PCI id -> the driver's name for it
};

class TargetRegistry
{
public:
  // `source_name` names the text in error messages.
  static Result<TargetRegistry> parse(std::string_view text, std::string source_name);
  static Result<TargetRegistry> load_file(const std::filesystem::path& path);
  static Result<TargetRegistry> embedded(); // manifests/targets.yaml as compiled in

  const Target* find(std::string_view name) const;
  const std::vector<Target>& targets() const { return m_targets; } // registry file order
  std::vector<std::string> names() const;
  const std::string& source_name() const { return m_source_name; }

private:
  std::string m_source_name;
  std::vector<Target> m_targets;
};

} // namespace prewarm::manifest
