// SPDX-License-Identifier: Apache-2.0
// A bundle directory as the OCI 1.1 artifact the runtime pulls
// (runtime/registry/oci_document.hpp is the format; this is its writer):
// the empty config, a layer for the signed manifest, one for its signature,
// one per slice (digest = the signed payload digest, annotated with the
// slice id), optionally a subject. The document is reproducible: same bundle
// (and subject) => same bytes => same digest.
#pragma once

#include "base/error.hpp"
#include "registry/oci_document.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::push {

struct ArtifactBlob
{
  registry::Descriptor descriptor;
  std::string bytes;                // small blobs (config, manifest, signature)
  std::filesystem::path file;       // large blobs (slices), read when uploaded
};

struct BundleArtifact
{
  std::vector<ArtifactBlob> blobs; // config first, then the layers in order
  std::string manifest;            // the OCI manifest's bytes
  registry::Descriptor manifest_descriptor;
  std::string created;             // RFC 3339, the bundle's issued-at
};

// Reads BUNDLE/manifest, manifest.sig and the slices the manifest lists; a
// slice file whose size or SHA-256 differs from the manifest is refused
// (E_PAYLOAD_DIGEST): the registry copy must be the signed one.
Result<BundleArtifact> make_bundle_artifact(const std::filesystem::path& bundle_dir,
                                            const std::optional<registry::Descriptor>& subject);

// The descriptor that names `artifact` in an index (a layout's index.json,
// the referrers fallback tag): mediaType, digest, size, artifactType, annotations.
std::string descriptor_json(const BundleArtifact& artifact, const std::string& ref_name = {});

} // namespace prewarm::push
