// SPDX-License-Identifier: Apache-2.0
// `prewarm-runtime status`: what is installed under ROOT, for which devices
// it was made, and whether this host still is such a device. A driver cache
// made for another GPU or driver is not harmful, just useless (the driver
// rejects and rebuilds), so a mismatch is a warning, not an error.
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "host/host_device.hpp"
#include "install/install_records.hpp"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace prewarm::install {

struct SliceStatus
{
  std::string id;
  std::vector<bundle::Requirement> requirements; // what it was made for
  std::vector<std::string> jobs;
  std::vector<std::string> kinds;
  bool matches_host = false;
  std::string mismatch; // why not, when it does not
};

struct KindStatus
{
  std::string kind;
  std::uint64_t files = 0; // installed (marker)
  std::uint64_t bytes = 0;
  std::uint64_t live_files = 0; // on disk now (the application may have added)
  std::uint64_t live_bytes = 0;
};

struct InstallStatus
{
  std::filesystem::path root;
  std::optional<InstalledMarker> marker; // nullopt: nothing installed
  std::filesystem::path version_dir;     // where its caches are (install_layout.hpp)
  bool interrupted = false;              // a crashed install left its note
  ChannelState state;
  std::vector<SliceStatus> slices;
  std::vector<KindStatus> kinds;
  std::vector<std::string> warnings;
};

Result<InstallStatus> read_install_status(const std::filesystem::path& root,
                                          std::span<const host::HostDevice> host_devices);

std::string to_text(const InstallStatus& status);
nlohmann::json to_json(const InstallStatus& status);

} // namespace prewarm::install
