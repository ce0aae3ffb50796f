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
// The installer then installs the directory with the manifest verified and
// the slices selected here (install::install_verified_bundle: verified and
// selected once): the live caches are touched only by the installer, after
// all of the above.
// DOWNLOADS/<hex> is private (0700) and handled through directory fds
// (download_directory.hpp); a failed transfer leaves it for the next run to
// resume, a verification failure removes it.
//
// Referrers: anyone who can push to the image's repository can attach one,
// so a referrer counts only when its OCI manifest's subject is the image's
// digest (E_REFERRER_SUBJECT otherwise), the index is capped
// (registry_fetch.hpp), and at most max_referrers candidates are fetched,
// newest first (org.opencontainers.image.created); none of them verifying
// while more were listed is E_REFERRERS_LIMIT.
//
// Time: the client's deadline (ClientOptions::deadline, --registry-timeout)
// covers every request of the pull, retries and waits included.
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/trust.hpp"
#include "host/host_device.hpp"
#include "install/bundle_verification.hpp"
#include "install/installer.hpp"
#include "pull/download_directory.hpp"
#include "registry/image_reference.hpp"
#include "registry/registry_client.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace prewarm::pull {

using registry::ImageReference;

struct PulledBundle
{
  ImageReference reference;  // pinned
  std::filesystem::path dir; // a bundle directory with this host's slices
  std::filesystem::path downloads; // its parent, ROOT/.prewarm/downloads
  std::string name;                // dir's name in it
  std::vector<std::string> slices_fetched;
  std::uint64_t bytes_received = 0; // 2xx body bytes, this run
  bool already_installed = false;   // install_root holds it: no slice fetched
  // The signed manifest as verified from `dir`: the installer takes it
  // (install::install_verified_bundle) instead of verifying it again.
  install::VerifiedBundle verified;
  // The slices fetched, as selected for this host from `verified` (none when
  // already_installed): the installer takes it instead of selecting again.
  std::optional<install::SliceSelection> selection;
};

struct PullRequest
{
  const bundle::TrustStore* trust = nullptr;
  SysSeconds now{};
  install::VerifyOptions verify;
  install::HostSource host;        // probed only when the root does not hold the bundle for this host
  std::filesystem::path downloads; // parent of the per-bundle download directories
  std::filesystem::path install_root; // empty: always fetch the selected slices
  registry::ClientOptions client;
  std::size_t max_referrers = 16; // candidates fetched for --referrer-of, newest first
  std::vector<std::string> waived_requirements; // install --ignore-requirement (install/slice_selection.hpp)
};

inline constexpr std::string_view k_referrer_subject = "E_REFERRER_SUBJECT";
inline constexpr std::string_view k_referrers_limit = "E_REFERRERS_LIMIT";

// Steps 1-5 for a pinned reference.
Result<PulledBundle> pull_bundle(const ImageReference& pinned, const PullRequest& request);

// The bundle attached to `image` (pinned): of its referrers with the bundle's
// artifactType, those whose signed manifest verifies; the highest serial wins.
// None: Errc::failed E_NOT_FOUND. Then as pull_bundle().
// Referrers whose subject is not `image` are refused (see above).
Result<PulledBundle> pull_bundle_referring_to(const ImageReference& image, const PullRequest& request);

// Removes what the pull downloaded (after the install, or a refusal).
Status discard_download(const PulledBundle& pulled);

} // namespace prewarm::pull
