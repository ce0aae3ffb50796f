// SPDX-License-Identifier: Apache-2.0
// `install REGISTRY/REPO@sha256:HEX` (or --referrer-of IMAGE) as one call:
// the pull (bundle_pull.hpp), then the install of what it verified and
// selected (install::install_verified_bundle), with the policy around the two
// in one place:
//   - the pull found the root holding the bundle (no slice fetched), but the
//     locked install finds otherwise (another installer, a cache directory
//     removed meanwhile): the download is discarded and the pull made again,
//     this time fetching the slices, once;
//   - installed, or refused for good (a verification failure): the download
//     is discarded; any other failure keeps it for the next run to resume.
#pragma once

#include "base/error.hpp"
#include "install/installer.hpp"
#include "pull/bundle_pull.hpp"

#include <filesystem>

namespace prewarm::pull {

struct RegistrySource
{
  ImageReference reference; // pinned
  enum class Names { bundle, image_it_refers_to } names = Names::bundle;
};

// request.install_root is set to `root` here; request.host is asked once
// for the pull and the install together.
Result<install::InstallReport> install_from_registry(const RegistrySource& source, PullRequest request,
                                                     const std::filesystem::path& root,
                                                     const install::InstallOptions& options);

} // namespace prewarm::pull
