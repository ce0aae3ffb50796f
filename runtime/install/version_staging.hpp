// SPDX-License-Identifier: Apache-2.0
// The middle of an install, between the lock and the commit: the selected
// slices extracted into the private staging directory (ROOT/.prewarm/
// staging-*) and made ready to be published as version `id`. The installer
// (installer.hpp) decides whether to install, holds the lock and commits
// what this returns; nothing here touches the live root.
#pragma once

#include "audit/file_inventory.hpp"
#include "base/error.hpp"
#include "bundle/slice_reader.hpp"
#include "bundle/trust_policy.hpp"
#include "install/install_records.hpp"
#include "install/slice_selection.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::install {

// Each selected slice extracted beneath `staging_fd`; a slice's payload size
// and digest are checked before libarchive reads a byte of it.
Status extract_selected_slices(const std::filesystem::path& bundle_dir, const SliceSelection& selection, int staging_fd,
                               const bundle::ExtractLimits& limits);

struct StagedVersion
{
  std::vector<std::string> kinds;    // the kinds to commit, sorted
  std::vector<InstalledKind> counts; // files and bytes of each, for the marker
  audit::Inventory inventory;        // every installed file, per kind
  audit::InventoryStates states;     // their size, mtime and digest as installed
};

// How staged files reach the disk before they are renamed into place.
enum class SyncMethod {
  filesystem, // one syncfs(2) on the staging directory's filesystem
  each_file,  // fsync(2) of every staged file and directory
};

// Makes the extracted kinds ready to publish as `version_dir`
// (ROOT/.prewarm/versions/<id>): per kind, the install hygiene
// (tree_commit.hpp) and Triton's group files pointed at `version_dir`/<kind>,
// then counted; the file inventory; owners from the policy (when root);
// synced to disk.
Result<StagedVersion> prepare_staged_version(int staging_fd, const std::filesystem::path& staging,
                                             const SliceSelection& selection, const std::filesystem::path& version_dir,
                                             const std::optional<bundle::InstallOwner>& owner, SyncMethod sync);

} // namespace prewarm::install
