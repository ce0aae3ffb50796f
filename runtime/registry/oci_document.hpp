// SPDX-License-Identifier: Apache-2.0
// The OCI documents a prewarm bundle travels in (image-spec v1.1), and the
// strict readers the runtime applies to what a registry returns.
//
// A bundle is an image manifest with its own artifactType:
//   { "schemaVersion": 2,
//     "mediaType": "application/vnd.oci.image.manifest.v1+json",
//     "artifactType": "application/vnd.prewarm.bundle.v1",
//     "config": <the empty descriptor: application/vnd.oci.empty.v1+json, "{}">,
//     "layers": [ {manifest: application/vnd.prewarm.manifest.v1},
//                 {signature: application/vnd.prewarm.signature.v1},
//                 {slice: application/vnd.prewarm.slice.v1.tar+zstd,
//                  annotations: {"org.prewarm.slice.id": "<id>", ...}}... ],
//     "subject": <descriptor of the application image it serves, optional>,
//     "annotations": {...} }
// A slice blob's digest is the signed manifest's payload digest, so the
// runtime fetches a slice by what the signature covers, not by this document.
//
// Referrers (distribution spec v1.1): GET /v2/<name>/referrers/<digest> is an
// image index of the manifests whose subject is <digest>; a registry without
// that API keeps the same index under the tag "sha256-<hex>" (the fallback
// the pusher maintains).
//
// Readers: JSON only (nlohmann), size capped before parsing; every field the
// runtime uses is type-checked, descriptors need a sha256 digest and a size;
// anything else is Errc::verify E_OCI_FORMAT naming the field.
#pragma once

#include "base/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::registry {

inline constexpr std::string_view k_image_manifest_type = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view k_image_index_type = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view k_docker_manifest_type = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view k_docker_list_type = "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr std::string_view k_empty_config_type = "application/vnd.oci.empty.v1+json";
inline constexpr std::string_view k_empty_config_bytes = "{}";
inline constexpr std::string_view k_bundle_artifact_type = "application/vnd.prewarm.bundle.v1";
inline constexpr std::string_view k_manifest_layer_type = "application/vnd.prewarm.manifest.v1";
inline constexpr std::string_view k_signature_layer_type = "application/vnd.prewarm.signature.v1";
inline constexpr std::string_view k_slice_layer_type = "application/vnd.prewarm.slice.v1.tar+zstd";
inline constexpr std::string_view k_slice_id_annotation = "org.prewarm.slice.id";
inline constexpr std::string_view k_title_annotation = "org.opencontainers.image.title";

// The OCI spec suggests registries refuse manifests above 4 MiB; so do we.
inline constexpr std::uint64_t k_max_oci_document_bytes = std::uint64_t{4} << 20;

struct Descriptor
{
  std::string media_type;
  std::string digest; // sha256:<hex>
  std::uint64_t size = 0;
  std::string artifact_type; // may be empty
  std::map<std::string, std::string> annotations;
};

struct OciManifest
{
  std::string media_type;
  std::string artifact_type; // artifactType, else config.mediaType (image-spec rule)
  Descriptor config;
  std::vector<Descriptor> layers;
  std::optional<Descriptor> subject;
  std::map<std::string, std::string> annotations;
};

struct OciIndex
{
  std::vector<Descriptor> manifests;
};

Result<OciManifest> parse_oci_manifest(std::string_view json);
Result<OciIndex> parse_oci_index(std::string_view json);

// The one layer of `manifest` with `media_type`: none or several is
// Errc::verify E_OCI_FORMAT ("not a prewarm bundle").
Result<Descriptor> single_layer(const OciManifest& manifest, std::string_view media_type);

// "sha256:<hex>" -> "sha256-<hex>", the referrers fallback tag.
std::string referrers_tag(std::string_view digest);

} // namespace prewarm::registry
