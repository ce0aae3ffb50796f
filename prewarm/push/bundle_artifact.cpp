// SPDX-License-Identifier: Apache-2.0
#include "push/bundle_artifact.hpp"

#include "base/digest.hpp"
#include "base/time_format.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/bundle_manifest.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace prewarm::push {

namespace {

using ordered = nlohmann::ordered_json;

ordered
to_json(const registry::Descriptor& d)
{
  ordered out = {{"mediaType", d.media_type}, {"digest", d.digest}, {"size", d.size}};
  if (!d.artifact_type.empty()) {
    out["artifactType"] = d.artifact_type;
  }
  if (!d.annotations.empty()) {
    out["annotations"] = d.annotations;
  }
  return out;
}

ArtifactBlob
small_blob(std::string media_type, std::string bytes, std::map<std::string, std::string> annotations = {})
{
  ArtifactBlob blob;
  blob.descriptor = {std::move(media_type), "sha256:" + sha256_hex(bytes), bytes.size(), {}, std::move(annotations)};
  blob.bytes = std::move(bytes);
  return blob;
}

} // namespace

Result<BundleArtifact>
make_bundle_artifact(const std::filesystem::path& bundle_dir, const std::optional<registry::Descriptor>& subject)
{
  PW_ASSIGN(auto files, bundle::load_bundle_files(bundle_dir));
  // The pusher's own bundle: parsed to list its slices; the runtime verifies
  // the signature before it parses anything of it.
  PW_ASSIGN_CTX(const auto manifest, (bundle_dir / bundle::k_manifest_file).string(),
                bundle::parse(files.manifest_bytes));
  BundleArtifact artifact;
  artifact.created = format_rfc3339(manifest.issued_at);
  artifact.blobs.push_back(small_blob(std::string(registry::k_empty_config_type),
                                      std::string(registry::k_empty_config_bytes)));
  artifact.blobs.push_back(small_blob(std::string(registry::k_manifest_layer_type), std::move(files.manifest_bytes),
                                      {{std::string(registry::k_title_annotation), "manifest"}}));
  artifact.blobs.push_back(small_blob(std::string(registry::k_signature_layer_type), std::move(files.envelope_bytes),
                                      {{std::string(registry::k_title_annotation), "manifest.sig"}}));
  for (const auto& slice : manifest.slices) {
    const auto path = bundle::slice_payload_path(bundle_dir, slice.id);
    PW_ASSIGN_CTX(const auto fd, fmt::format("slice {}", slice.id), bundle::open_slice_payload(bundle_dir, slice.id));
    PW_ASSIGN(const auto size, file_size(fd.get()));
    if (size != slice.payload_size) {
      return fail(Errc::verify, fmt::format("{}: {} bytes, the manifest says {}", path.string(), size, slice.payload_size),
                  "E_PAYLOAD_SIZE");
    }
    PW_ASSIGN(const auto digest, sha256_hex_of_fd(fd.get(), size));
    if (digest != slice.payload_sha256) {
      return fail(Errc::verify, fmt::format("{}: SHA-256 {}, the manifest says {}", path.string(), digest,
                                            slice.payload_sha256),
                  "E_PAYLOAD_DIGEST");
    }
    ArtifactBlob blob;
    blob.descriptor = {std::string(registry::k_slice_layer_type),
                       "sha256:" + digest,
                       size,
                       {},
                       {{std::string(registry::k_slice_id_annotation), slice.id},
                        {std::string(registry::k_title_annotation), fmt::format("slices/{}.tar.zst", slice.id)}}};
    blob.file = path;
    artifact.blobs.push_back(std::move(blob));
  }

  ordered document = {{"schemaVersion", 2},
                      {"mediaType", registry::k_image_manifest_type},
                      {"artifactType", registry::k_bundle_artifact_type},
                      {"config", to_json(artifact.blobs.front().descriptor)},
                      {"layers", ordered::array()}};
  for (std::size_t i = 1; i < artifact.blobs.size(); ++i) {
    document["layers"].push_back(to_json(artifact.blobs[i].descriptor));
  }
  if (subject) {
    document["subject"] = to_json(*subject);
  }
  document["annotations"] = {{"org.opencontainers.image.created", artifact.created},
                             {"org.prewarm.channel", manifest.channel},
                             {"org.prewarm.serial", std::to_string(manifest.serial)}};
  artifact.manifest = document.dump();
  artifact.manifest_descriptor = {std::string(registry::k_image_manifest_type),
                                  "sha256:" + sha256_hex(artifact.manifest),
                                  artifact.manifest.size(),
                                  std::string(registry::k_bundle_artifact_type),
                                  {{"org.opencontainers.image.created", artifact.created}}};
  return artifact;
}

std::string
descriptor_json(const BundleArtifact& artifact, const std::string& ref_name)
{
  auto d = artifact.manifest_descriptor;
  if (!ref_name.empty()) {
    d.annotations["org.opencontainers.image.ref.name"] = ref_name;
  }
  return to_json(d).dump();
}

} // namespace prewarm::push
