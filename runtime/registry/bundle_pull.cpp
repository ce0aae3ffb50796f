// SPDX-License-Identifier: Apache-2.0
#include "registry/bundle_pull.hpp"

#include "base/files.hpp"
#include "base/log.hpp"
#include "bundle/bundle_files.hpp"
#include "install/installer.hpp"
#include "install/slice_selection.hpp"
#include "registry/registry_fetch.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

namespace prewarm::registry {

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t k_max_signature_bytes = 64 << 10; // as bundle_files.hpp caps manifest.sig
constexpr std::string_view k_not_a_bundle = "E_OCI_ARTIFACT_TYPE";

Status
make_private_dir(const fs::path& dir)
{
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || ::chmod(dir.c_str(), 0700) != 0) {
    return fail(Errc::failed, fmt::format("cannot create the download directory {}: {}", dir.string(),
                                          ec ? ec.message() : errno_message(errno)),
                "E_IO");
  }
  return {};
}

struct VerifiedPull
{
  ImageReference reference;
  fs::path dir;
  install::VerifiedBundle verified;
};

// Steps 1-3: the OCI manifest, the signed manifest and its signature,
// verified. On a verification failure the directory is removed.
Result<VerifiedPull>
fetch_and_verify(RegistryClient& client, const ImageReference& pinned, const PullRequest& request)
{
  PW_ASSIGN(const auto document, fetch_pinned_manifest(client, pinned));
  PW_ASSIGN_CTX(const auto oci, pinned.to_string(), parse_oci_manifest(document));
  if (oci.artifact_type != k_bundle_artifact_type) {
    return fail(Errc::verify,
                fmt::format("{}: artifactType {} is not a prewarm bundle ({})", pinned.to_string(), oci.artifact_type,
                            k_bundle_artifact_type),
                std::string(k_not_a_bundle));
  }
  PW_ASSIGN_CTX(const auto manifest_layer, pinned.to_string(), single_layer(oci, k_manifest_layer_type));
  PW_ASSIGN_CTX(const auto signature_layer, pinned.to_string(), single_layer(oci, k_signature_layer_type));

  VerifiedPull pull{pinned, request.downloads / pinned.digest.substr(7), {}};
  PW_TRY(make_private_dir(pull.dir / "slices"));
  auto verified = [&]() -> Result<install::VerifiedBundle> {
    PW_ASSIGN(const auto manifest, fetch_small_blob(client, pinned.repository, manifest_layer,
                                                    bundle::k_max_manifest_bytes));
    PW_ASSIGN(const auto signature, fetch_small_blob(client, pinned.repository, signature_layer,
                                                     k_max_signature_bytes));
    PW_TRY(write_file_atomic(pull.dir / bundle::k_manifest_file, manifest, 0600, Durability::none));
    PW_TRY(write_file_atomic(pull.dir / bundle::k_signature_file, signature, 0600, Durability::none));
    return install::verify_manifest(pull.dir, *request.trust, request.now, request.verify);
  }();
  if (!verified) {
    if (verified.error().category() == Errc::verify) {
      (void)remove_tree(pull.dir);
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
  PulledBundle pulled{pull.reference, pull.dir, {}, 0, false};
  if (!request.install_root.empty() &&
      install::holds_bundle_for_unchanged_host(request.install_root, pull.verified, request.host)) {
    log::info("{} is already installed under {} for this host (fingerprint unchanged: devices not probed): no slice "
              "fetched",
              pull.reference.to_string(), request.install_root.string());
    pulled.already_installed = true;
    pulled.bytes_received = client.bytes_received();
    return pulled;
  }
  PW_ASSIGN(const auto devices, request.host.probe());
  auto selection = install::select_slices(pull.verified.manifest, devices, request.waived_requirements);
  if (!selection) {
    (void)remove_tree(pull.dir); // nothing for this host: nothing to resume either
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
      pulled.bytes_received = client.bytes_received();
      return pulled;
    }
  }
  for (const auto& selected : selection->selected) {
    const auto& slice = *selected.slice;
    const auto digest = "sha256:" + slice.payload_sha256;
    log::info("fetching slice {} for {} ({} bytes) from {}", slice.id, selected.device, slice.payload_size,
              pull.reference.registry);
    auto fetched = download_blob(client, pull.reference.repository, digest, slice.payload_size,
                                 bundle::slice_payload_path(pull.dir, slice.id));
    if (!fetched) {
      if (fetched.error().category() == Errc::verify) {
        (void)remove_tree(pull.dir);
      }
      return fail(std::move(fetched).error().wrap(fmt::format("{}: slice {}", pull.reference.to_string(), slice.id)));
    }
    pulled.slices_fetched.push_back(slice.id);
  }
  pulled.bytes_received = client.bytes_received();
  return pulled;
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
  PW_ASSIGN(const auto referrers, find_referrers(client, image, k_bundle_artifact_type));
  std::optional<VerifiedPull> best;
  std::vector<std::string> refused;
  std::optional<Error> unavailable;
  for (const auto& referrer : referrers) {
    auto candidate = fetch_and_verify(client, image.with_digest(referrer.digest), request);
    if (!candidate && candidate.error().code() == k_not_a_bundle) {
      log::verbose("{}", candidate.error().describe()); // another artifact of the image (listed without artifactType)
      continue;
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
        (void)remove_tree(best->dir);
      }
      best = std::move(*candidate);
    } else {
      (void)remove_tree(candidate->dir);
    }
  }
  if (!best) {
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

} // namespace prewarm::registry
