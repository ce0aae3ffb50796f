// SPDX-License-Identifier: Apache-2.0
// A bundle from a registry, laid out as the bundle directory the installer
// reads, holding only the slices this host needs:
//
//   1. GET the OCI manifest by its pinned digest (digest checked, <= 4 MiB),
//      parse it (oci_document.hpp): artifactType must be the bundle's
//   2. GET the signed manifest and signature blobs (digest checked, capped
//      like a directory's files) into DOWNLOADS/<hex>/manifest{,.sig}
//   3. verify them exactly as for a directory (install::verify_manifest:
//      signature before a byte is parsed, then policy and validity period)
//   4. select this host's slices (nothing applies: Errc::not_applicable,
//      nothing downloaded); when INSTALL_ROOT already holds this signed
//      manifest's selection (its marker: install::holds_bundle), stop here:
//      a persistent root costs the OCI manifest, the signed manifest and
//      its signature at each start, never a slice
//   5. GET each selected slice's blob by the digest the signature covers,
//      capped at its signed size, into DOWNLOADS/<hex>/slices/<id>.tar.zst
//      (resumable; registry_fetch.hpp)
// The installer then verifies the directory again and installs it: the live
// caches are touched only by install_bundle(), after all of the above.
// DOWNLOADS/<hex> is private (0700); a failed transfer leaves it for the
// next run to resume, a verification failure removes it.
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/trust.hpp"
#include "host/host_device.hpp"
#include "install/bundle_verification.hpp"
#include "install/installer.hpp"
#include "registry/image_reference.hpp"
#include "registry/registry_client.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace prewarm::registry {

struct PulledBundle
{
  ImageReference reference;  // pinned
  std::filesystem::path dir; // a bundle directory with this host's slices
  std::vector<std::string> slices_fetched;
  std::uint64_t bytes_received = 0; // 2xx body bytes, this run
  bool already_installed = false;   // install_root holds it: no slice fetched
};

struct PullRequest
{
  const bundle::TrustStore* trust = nullptr;
  SysSeconds now{};
  install::VerifyOptions verify;
  install::HostSource host;        // probed only when the root does not hold the bundle for this host
  std::filesystem::path downloads; // parent of the per-bundle download directories
  std::filesystem::path install_root; // empty: always fetch the selected slices
  ClientOptions client;
  std::vector<std::string> waived_requirements; // install --ignore-requirement (install/slice_selection.hpp)
};

// Steps 1-5 for a pinned reference.
Result<PulledBundle> pull_bundle(const ImageReference& pinned, const PullRequest& request);

// The bundle attached to `image` (pinned): of its referrers with the bundle's
// artifactType, those whose signed manifest verifies; the highest serial wins.
// None: Errc::failed E_NOT_FOUND. Then as pull_bundle().
Result<PulledBundle> pull_bundle_referring_to(const ImageReference& image, const PullRequest& request);

} // namespace prewarm::registry
