// SPDX-License-Identifier: Apache-2.0
// One install root holds one channel's bundle at a time.
//
// Why not side by side: the live caches are ROOT/<kind> and the environment
// points each cache variable at exactly one directory, so two channels would
// have to share ROOT/pocl (files of one bundle under the other's marker, and
// an uninstall or upgrade of one removing the other's entries) or get
// per-channel directories that no single POCL_CACHE_DIR can name. Refusing is
// the honest answer: a second channel installed into an occupied root fails
// with E_CHANNEL_OCCUPIED, naming the installed channel and serial and the two
// ways forward — another --root for the second channel, or
// `install --replace-channel` to replace the installed one on purpose.
// Nothing is written before the refusal, so the installed bundle keeps
// working. The rollback state (high-water serials) keeps every channel's
// record either way.
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "install/install_records.hpp"

#include <filesystem>
#include <optional>

namespace prewarm::install {

enum class ChannelReplacement {
  refuse,  // another channel's bundle in the root: E_CHANNEL_OCCUPIED
  replace, // --replace-channel: the new channel replaces the installed one
};

// Errc::failed E_CHANNEL_OCCUPIED when `installed` is another channel and
// `replacement` is refuse.
Status check_channel_occupancy(const std::optional<InstalledMarker>& installed,
                               const bundle::BundleManifest& incoming,
                               const std::filesystem::path& root,
                               ChannelReplacement replacement);

} // namespace prewarm::install
