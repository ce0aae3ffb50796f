// SPDX-License-Identifier: Apache-2.0
// The two small records an install root keeps under ROOT/.prewarm. Both are
// written atomically (temp + rename + fsync) as the LAST step of an install,
// so a reader sees the old or the new one, never a mix.
//
// Marker (ROOT/.prewarm/installed): what is installed.
//   "prewarm-installed 1" LF
//   "manifest-sha256 " SHA256 LF         digest of the signed manifest bytes
//   "channel " NAME LF
//   "serial " U64 LF
//   "installed-at " TIME LF
//   ["host-fingerprint " SHA256 LF]      host/host_fingerprint.hpp: the host the
//                                        slices were selected on (absent: unknown)
//   ("slice " ID LF)+                    the slices selected for this host
//   ("kind " KIND " " FILES " " BYTES LF)+   the kinds now live under ROOT
//
// State (ROOT/.prewarm/state): the rollback guard. It outlives reinstalls of
// older images on the same volume: the highest serial ever installed per
// channel, and the manifest digest installed at that serial.
//   "prewarm-state 1" LF
//   ("channel " NAME " " U64 " " SHA256 LF)*   sorted by channel
//
// The install root is written by this tool only, but it is not signed:
// parsing is strict so that damage is noticed (the installer then reinstalls;
// a damaged state file is an error, since dropping it would allow rollback).
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::install {

struct InstalledKind
{
  std::string kind;
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  auto operator<=>(const InstalledKind&) const = default;
};

struct InstalledMarker
{
  std::string manifest_sha256;
  std::string channel;
  std::uint64_t serial = 0;
  SysSeconds installed_at{};
  std::string host_fingerprint; // empty: not recorded (older markers, a host given by the caller)
  std::string version;          // ROOT/.prewarm/versions/<version>; empty: a legacy root
  std::vector<std::string> slice_ids;
  std::vector<InstalledKind> kinds;
  auto operator<=>(const InstalledMarker&) const = default;
};

struct ChannelHighWater
{
  std::uint64_t serial = 0;
  std::string manifest_sha256;
  auto operator<=>(const ChannelHighWater&) const = default;
};

using ChannelState = std::map<std::string, ChannelHighWater>;

std::string serialize(const InstalledMarker& marker);
Result<InstalledMarker> parse_marker(std::string_view text);
std::string serialize(const ChannelState& state);
Result<ChannelState> parse_state(std::string_view text);

// Absent file: nullopt / empty state. Malformed: Errc::failed naming the file.
Result<std::optional<InstalledMarker>> read_marker(const std::filesystem::path& root);
Result<ChannelState> read_state(const std::filesystem::path& root);

Status write_marker(const std::filesystem::path& root, const InstalledMarker& marker);
Status write_state(const std::filesystem::path& root, const ChannelState& state);

} // namespace prewarm::install
