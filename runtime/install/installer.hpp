// SPDX-License-Identifier: Apache-2.0
// `prewarm-runtime install`: verify a bundle, pick the slices for this host,
// and publish them under ROOT as a new version with one atomic switch
// (layout: install_layout.hpp; mechanics: version_switch.hpp).
//
// Sequence:
//   verify signature -> parse -> validity period
//   -> the host's fingerprint (host/host_fingerprint.hpp) equals the marker's,
//      the marker names this manifest, no install was interrupted, every kind
//      directory of its version is there: done, the host not probed, nothing written
//   -> probe the host -> select slices
//     (nothing is written anywhere before this point)
//   mkdir ROOT (never through a symlink) -> flock ROOT/.prewarm/lock (bounded)
//   -> remove stale staging dirs -> another channel installed: E_CHANNEL_OCCUPIED
//      unless --replace-channel (channel_guard.hpp) -> marker == this manifest and its slices,
//      and every installed kind directory still there: done (versions no
//      application holds any more are removed, ROOT/<kind> links repaired)
//   -> rollback guard (rollback_guard.hpp): serial < high-water of the
//      channel (E_ROLLBACK), same serial with another manifest
//      (E_ROLLBACK_EQUIVOCATION)
//   -> statvfs: free >= uncompressed size + a block per entry + margin
//      (space_margin.hpp; E_NOSPC says what would fit)
//   -> staging dir -> extract every selected slice (payload digest first)
//   -> kind hygiene -> policy install.owner (root only) -> syncfs (or fsync
//      every file and directory)
//   -> the version's records (.manifest, .files, .environment) -> publish
//      staging as versions/<id> -> state -> marker naming <id> (THE switch)
//   -> ROOT/<kind> links -> remove the versions no process holds -> unlock.
// On any failure before the switch: the new version and staging removed,
// lock released: the current version and the marker are as they were.
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/slice_reader.hpp"
#include "bundle/trust.hpp"
#include "host/host_device.hpp"
#include "install/bundle_verification.hpp"
#include "install/channel_guard.hpp"
#include "install/host_source.hpp"
#include "install/slice_selection.hpp"
#include "install/tree_commit.hpp"
#include "install/space_margin.hpp"
#include "install/version_staging.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace prewarm::install {

struct InstallOptions
{
  VerifyOptions verify;
  std::chrono::milliseconds lock_timeout{120'000};
  // Free space needed beyond the caches (space_margin.hpp: 10% of them, at
  // least 1 MiB, unless set).
  SpaceMargin space_margin;
  bundle::ExtractLimits limits;
  // syncfs is one call instead of one per file (2048 files: ~7 s of fsync on
  // a busy virtio disk); it also flushes other dirty data of that filesystem,
  // which at container start is little. each_file touches nothing else.
  SyncMethod sync = SyncMethod::filesystem;
  std::optional<SysSeconds> now; // default: the current time, read once
  // Another channel's bundle already in the root (channel_guard.hpp).
  ChannelReplacement channels = ChannelReplacement::refuse;
  // Requirement keys not evaluated (--ignore-requirement): slice_selection.hpp.
  std::vector<std::string> waived_requirements;
};

enum class InstallOutcome { installed, already_installed };

struct InstallReport
{
  InstallOutcome outcome = InstallOutcome::installed;
  std::filesystem::path root;
  std::string manifest_sha256;
  std::string channel;
  std::uint64_t serial = 0;
  std::vector<std::string> signer_key_ids;
  struct Selected
  {
    std::string slice_id;
    std::string device; // the host device it matched
  };
  std::vector<Selected> selected;
  std::vector<SkippedSlice> skipped;
  std::vector<KindCommit> commits;     // empty when already installed
  std::string version;                 // the version made (install_layout.hpp); empty when already installed
  std::vector<std::string> warnings;
  // Already installed, and the trust policy's install.environment differs
  // from the one recorded with the version: the record was written again, so
  // env/exec now export what this policy allows (no cache file changed).
  bool environment_updated = false;
  double seconds = 0;
  struct Phase
  {
    std::string name; // verify, lock, extract, sync, commit, cleanup
    double seconds = 0;
  };
  std::vector<Phase> phases;
};

// Whether ROOT already holds this verified bundle's selection (the check
// install_bundle() makes under its lock, made here without it: the marker is
// replaced atomically). A registry pull asks first and fetches no slice for
// a persistent root that holds the bundle. Reads only; false when ROOT does
// not exist or an install there was interrupted.
bool holds_bundle(const std::filesystem::path& root, const VerifiedBundle& verified,
                  const std::vector<std::string>& selected_ids);

// Whether ROOT holds this verified bundle as installed on this very host:
// the marker names this manifest and this host's fingerprint, and what it
// selected is in place. Then the slices a probe would select are the
// installed ones, and neither a registry pull nor the install probes.
bool holds_bundle_for_unchanged_host(const std::filesystem::path& root, const VerifiedBundle& verified,
                                     const HostSource& host);

Result<InstallReport> install_bundle(const std::filesystem::path& bundle_dir,
                                     const bundle::TrustStore& trust,
                                     const std::filesystem::path& root,
                                     const HostSource& host,
                                     const InstallOptions& options = {});

// As install_bundle(), for a bundle the caller verified from `bundle_dir`
// already with these options (a registry pull verifies before it fetches a
// slice): not verified a second time. Slices are still checked against the
// verified manifest's digests as they are extracted. `selection`, when
// given, is the caller's select_slices() of this manifest for this host with
// options.waived_requirements (a registry pull selects before it fetches):
// taken as it is, neither probed nor selected again. Its slices point into
// verified.manifest (moving a VerifiedBundle keeps them where they are).
Result<InstallReport> install_verified_bundle(const std::filesystem::path& bundle_dir, VerifiedBundle verified,
                                              const std::filesystem::path& root, const HostSource& host,
                                              const InstallOptions& options = {},
                                              std::optional<SliceSelection> selection = std::nullopt);

// Devices given by the caller (probed already, or a test's): no fingerprint.
Result<InstallReport> install_bundle(const std::filesystem::path& bundle_dir,
                                     const bundle::TrustStore& trust,
                                     const std::filesystem::path& root,
                                     std::span<const host::HostDevice> host_devices,
                                     const InstallOptions& options = {});

} // namespace prewarm::install
