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
// Start record (VERSION/.start, install_layout.hpp): what a repeated install
// and every `exec` need of the installed version, worked out once by the
// install that made it (install/start_record.hpp), so that neither parses
// the manifest nor does work per installed file.
//   "prewarm-start 1" LF
//   "runtime " TEXT LF                   the prewarm-runtime version that wrote it
//   "manifest-sha256 " SHA256 LF
//   "policy " SHA256 LF                  digest of the trust policy rules the
//                                        manifest was judged under
//   "issued-at " TIME LF
//   "expires " TIME LF
//   "frameworks " ("yes" | "no") LF      whether a slice requires framework.*
//   ("site-packages " TEXT LF)*          where the build found them
//   ("refused " TEXT LF)*                install's warnings: variables env/exec
//                                        will not export under that policy
//   "root " TEXT LF                      the absolute root the settings name
//   "environment " ("recorded" | "at-exec") LF   at-exec: the paths below are
//                                        empty, exec works the environment out
//                                        (prewarm's OpenCL layer is found where
//                                        exec runs; a custom cache's flag is
//                                        merged into the application's value)
//   ("paths " ("version" | "root") LF    per --paths:
//    ("dir " ("r" | "rw") " " TEXT LF)*    cache directories used in place,
//                                          VERSION-relative, and the access
//                                          an application needs there
//    ("set " VAR " " TEXT LF)*             the exported settings, sorted
//    ("warn " TEXT LF)*)                   what env/exec say when they export them
//   TEXT: any bytes but LF (a value with LF is not recorded: exec works it out)
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

// One --paths choice of the start record.
struct StartPaths
{
  struct Directory
  {
    std::string relative; // "pocl", "custom/hashcat"
    bool written = false; // the application writes there (rw), else reads (r)
    auto operator<=>(const Directory&) const = default;
  };
  std::vector<Directory> directories;
  std::vector<std::pair<std::string, std::string>> settings; // variable, value; sorted
  std::vector<std::string> warnings;
  auto operator<=>(const StartPaths&) const = default;
};

struct StartRecord
{
  std::string runtime;
  std::string manifest_sha256;
  std::string policy;
  SysSeconds issued_at{};
  SysSeconds expires{};
  bool frameworks_wanted = false;
  std::vector<std::string> site_packages;
  std::vector<std::string> refused;
  std::string root;
  bool environment_recorded = false;
  StartPaths version_paths; // --paths version
  StartPaths root_paths;    // --paths root
  auto operator<=>(const StartRecord&) const = default;
};

std::string serialize(const InstalledMarker& marker);
Result<InstalledMarker> parse_marker(std::string_view text);
std::string serialize(const ChannelState& state);
Result<ChannelState> parse_state(std::string_view text);

// Absent file: nullopt / empty state. Malformed: Errc::failed naming the file.
Result<std::optional<InstalledMarker>> read_marker(const std::filesystem::path& root);
Result<ChannelState> read_state(const std::filesystem::path& root);

// The runtime version a start record names: a record of another one is not
// read (its rules may differ).
std::string_view start_record_runtime();

// nullopt when a text holds a LF (not recordable; see the grammar).
std::optional<std::string> serialize(const StartRecord& record);
Result<StartRecord> parse_start_record(std::string_view text);
// VERSION_DIR/.start; absent: nullopt. Malformed: Errc::failed naming the file.
Result<std::optional<StartRecord>> read_start_record(const std::filesystem::path& version_dir);

Status write_marker(const std::filesystem::path& root, const InstalledMarker& marker);
Status write_state(const std::filesystem::path& root, const ChannelState& state);

} // namespace prewarm::install
