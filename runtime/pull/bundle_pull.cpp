// SPDX-License-Identifier: Apache-2.0
#include "pull/bundle_pull.hpp"

#include "base/files.hpp"
#include "base/log.hpp"
#include "bundle/bundle_files.hpp"
#include "install/installer.hpp"
#include "install/slice_selection.hpp"
#include "registry/oci_document.hpp"
#include "registry/registry_fetch.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::pull {

using namespace registry;

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t k_max_signature_bytes = 64 << 10; // as bundle_files.hpp caps manifest.sig
constexpr std::string_view k_not_a_bundle = "E_OCI_ARTIFACT_TYPE";

struct VerifiedPull
{
  ImageReference reference;
  DownloadDirectory dir;
  install::VerifiedBundle verified;
};

// Steps 1-3: the OCI manifest, the signed manifest and its signature,
// verified. On a verification failure the directory is removed. A referrer
// (`subject` given) must name the image as its subject.
Result<VerifiedPull>
fetch_and_verify(RegistryClient& client, const ImageReference& pinned, const PullRequest& request,
                 const ImageReference* subject = nullptr)
{
  PW_ASSIGN(const auto document, fetch_pinned_manifest(client, pinned));
  PW_ASSIGN_CTX(const auto oci, pinned.to_string(), parse_oci_manifest(document));
  if (oci.artifact_type != k_bundle_artifact_type) {
    return fail(Errc::verify,
                fmt::format("{}: artifactType {} is not a prewarm bundle ({})", pinned.to_string(), oci.artifact_type,
                            k_bundle_artifact_type),
                std::string(k_not_a_bundle));
  }
  if (subject != nullptr && (!oci.subject || oci.subject->digest != subject->digest)) {
    // A bundle signed for another image, listed under this one: its
    // signature is good, and it is still not this image's bundle.
    return fail(Errc::verify,
                fmt::format("{}: listed as a referrer of {}, its subject is {}", pinned.to_string(), subject->digest,
                            oci.subject ? oci.subject->digest : std::string("missing")),
                std::string(k_referrer_subject));
  }
  PW_ASSIGN_CTX(const auto manifest_layer, pinned.to_string(), single_layer(oci, k_manifest_layer_type));
  PW_ASSIGN_CTX(const auto signature_layer, pinned.to_string(), single_layer(oci, k_signature_layer_type));

  PW_ASSIGN_CTX(auto dir, pinned.to_string(), open_download_directory(request.downloads, pinned.digest.substr(7)));
  VerifiedPull pull{pinned, std::move(dir), {}};
  auto verified = [&]() -> Result<install::VerifiedBundle> {
    PW_ASSIGN(const auto manifest, fetch_small_blob(client, pinned.repository, manifest_layer,
                                                    bundle::k_max_manifest_bytes));
    PW_ASSIGN(const auto signature, fetch_small_blob(client, pinned.repository, signature_layer,
                                                     k_max_signature_bytes));
    const auto where = pull.dir.path.string();
    PW_TRY(write_download_file(pull.dir.bundle.get(), std::string(bundle::k_manifest_file), manifest, where));
    PW_TRY(write_download_file(pull.dir.bundle.get(), std::string(bundle::k_signature_file), signature, where));
    return install::verify_manifest(pull.dir.path, *request.trust, request.now, request.verify);
  }();
  if (!verified) {
    if (verified.error().category() == Errc::verify) {
      (void)remove_download_directory(pull.dir);
    }
    return fail(std::move(verified).error().wrap(pinned.to_string()));
  }
  pull.verified = std::move(*verified);
  return pull;
}

// Steps 4-5.
Result<PulledBundle>
fetch_selected_slices(RegistryClient& client, VerifiedPull pull, const PullRequest& request)
{
  PulledBundle pulled{pull.reference, pull.dir.path, request.downloads, pull.dir.name, {}, 0, false, {}, {}};
  // Last, after every use of pull.verified (the selection points into it).
  const auto done = [&]() -> Result<PulledBundle> {
    pulled.bytes_received = client.bytes_received();
    pulled.verified = std::move(pull.verified);
    return std::move(pulled);
  };
  if (!request.install_root.empty() &&
      install::holds_bundle_for_unchanged_host(request.install_root, pull.verified, request.host)) {
    log::info("{} is already installed under {} for this host (fingerprint unchanged: devices not probed): no slice "
              "fetched",
              pull.reference.to_string(), request.install_root.string());
    pulled.already_installed = true;
    return done();
  }
  PW_ASSIGN(const auto devices, request.host.probe(install::framework_search(pull.verified.manifest)));
  auto selection = install::select_slices(pull.verified.manifest, devices, request.waived_requirements);
  if (!selection) {
    (void)remove_download_directory(pull.dir); // nothing for this host: nothing to resume either
    return fail(std::move(selection).error());
  }
  if (!request.install_root.empty()) {
    std::vector<std::string> selected_ids;
    for (const auto& selected : selection->selected) {
      selected_ids.push_back(selected.slice->id);
    }
    if (install::holds_bundle(request.install_root, pull.verified, selected_ids)) {
      log::info("{} is already installed under {}: no slice fetched", pull.reference.to_string(),
                request.install_root.string());
      pulled.already_installed = true;
      return done();
    }
  }
  for (const auto& selected : selection->selected) {
    const auto& slice = *selected.slice;
    const auto digest = "sha256:" + slice.payload_sha256;
    log::info("fetching slice {} for {} ({} bytes) from {}", slice.id, selected.device, slice.payload_size,
              pull.reference.registry);
    auto fetched = download_blob(client, pull.reference.repository, digest, slice.payload_size, pull.dir.slices.get(),
                                 bundle::slice_payload_path(pull.dir.path, slice.id).filename().string(),
                                 (pull.dir.path / "slices").string());
    if (!fetched) {
      if (fetched.error().category() == Errc::verify) {
        (void)remove_download_directory(pull.dir);
      }
      return fail(std::move(fetched).error().wrap(fmt::format("{}: slice {}", pull.reference.to_string(), slice.id)));
    }
    pulled.slices_fetched.push_back(slice.id);
  }
  // Its slices point into pull.verified.manifest, which done() moves into
  // `pulled` (a moved vector keeps its elements where they are).
  pulled.selection = std::move(*selection);
  return done();
}

// Newest first by the descriptor's created annotation (RFC 3339 sorts as
// text), undated ones last, later index entries before earlier ones.
std::vector<Descriptor>
newest_first(std::vector<Descriptor> referrers)
{
  std::ranges::reverse(referrers);
  std::ranges::stable_sort(referrers, [](const Descriptor& a, const Descriptor& b) {
    const auto created = [](const Descriptor& d) {
      const auto it = d.annotations.find("org.opencontainers.image.created");
      return it == d.annotations.end() ? std::string() : it->second;
    };
    return created(a) > created(b);
  });
  return referrers;
}

} // namespace

Result<PulledBundle>
pull_bundle(const ImageReference& pinned, const PullRequest& request)
{
  PW_ASSIGN(auto client, RegistryClient::create(pinned.registry, request.client));
  PW_ASSIGN(auto pull, fetch_and_verify(client, pinned, request));
  return fetch_selected_slices(client, std::move(pull), request);
}

Result<PulledBundle>
pull_bundle_referring_to(const ImageReference& image, const PullRequest& request)
{
  PW_ASSIGN(auto client, RegistryClient::create(image.registry, request.client));
  PW_ASSIGN(auto referrers, find_referrers(client, image, k_bundle_artifact_type));
  referrers = newest_first(std::move(referrers));
  const auto listed = referrers.size();
  if (listed > request.max_referrers) {
    log::info("{}: {} referrers listed; the {} newest are tried", image.to_string(), listed, request.max_referrers);
    referrers.resize(request.max_referrers);
  }
  std::optional<VerifiedPull> best;
  std::vector<std::string> refused;
  std::optional<Error> unavailable;
  for (const auto& referrer : referrers) {
    auto candidate = fetch_and_verify(client, image.with_digest(referrer.digest), request, &image);
    if (!candidate && candidate.error().code() == k_not_a_bundle) {
      log::verbose("{}", candidate.error().describe()); // another artifact of the image (listed without artifactType)
      continue;
    }
    if (!candidate && candidate.error().code() == k_deadline) {
      return fail(std::move(candidate).error());
    }
    if (!candidate) {
      // Anyone who can push to the repository can attach a referrer: one
      // that does not verify is passed over, and named if nothing else fits.
      log::verbose("{}", candidate.error().describe());
      if (candidate.error().category() != Errc::verify && !unavailable) {
        unavailable = candidate.error();
      }
      refused.push_back(candidate.error().describe());
      continue;
    }
    if (!best || candidate->verified.manifest.serial > best->verified.manifest.serial) {
      if (best) {
        (void)remove_download_directory(best->dir);
      }
      best = std::move(*candidate);
    } else {
      (void)remove_download_directory(candidate->dir);
    }
  }
  if (!best) {
    if (listed > referrers.size()) {
      return fail(Errc::failed,
                  fmt::format("no bundle among the {} newest of the {} referrers of {} verifies (at most {} are "
                              "tried){}",
                              referrers.size(), listed, image.to_string(), request.max_referrers,
                              refused.empty() ? std::string() : ": " + refused.front()),
                  std::string(k_referrers_limit));
    }
    if (unavailable) {
      return fail(std::move(*unavailable)); // the registry failed us: a retry may find one
    }
    if (!refused.empty()) {
      return fail(Errc::verify,
                  fmt::format("no referrer of {} verifies ({} tried): {}", image.to_string(), refused.size(),
                              refused.front()),
                  "E_REFERRER");
    }
    return fail(Errc::failed,
                fmt::format("no prewarm bundle refers to {} (artifactType {}; pushed with `prewarm push --subject`?)",
                            image.to_string(), k_bundle_artifact_type),
                std::string(k_not_found));
  }
  log::info("{}: bundle {} (channel {} serial {})", image.to_string(), best->reference.digest,
            best->verified.manifest.channel, best->verified.manifest.serial);
  return fetch_selected_slices(client, std::move(*best), request);
}

Status
discard_download(const PulledBundle& pulled)
{
  return remove_download_directory(pulled.downloads, pulled.name);
}

} // namespace prewarm::pull
