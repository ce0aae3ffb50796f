// SPDX-License-Identifier: Apache-2.0
// A bundle artifact as an OCI image layout (image-spec "image layout"), the
// single-file form for air-gapped copies. Destinations are written as
// skopeo and podman name them:
//   oci:DIR[:REF]           a directory: oci-layout, index.json, blobs/sha256/<hex>
//   oci-archive:FILE[:REF]  the same tree in one tar file (entries sorted,
//                           mtime = the bundle's issued-at, owner 0: reproducible)
// REF becomes org.opencontainers.image.ref.name in index.json. A layout is
// loaded into a registry with `skopeo copy oci-archive:FILE docker://REG/REPO:TAG`.
#pragma once

#include "base/error.hpp"
#include "push/bundle_artifact.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace prewarm::push {

enum class LayoutForm { directory, archive };

struct LayoutDestination
{
  LayoutForm form = LayoutForm::directory;
  std::filesystem::path path;
  std::string ref_name; // may be empty
};

// "oci:DIR[:REF]" / "oci-archive:FILE[:REF]"; anything else: nullopt.
std::optional<LayoutDestination> parse_layout_destination(std::string_view text);

// A directory must not exist or be empty; an archive is replaced atomically.
Status write_oci_layout(const BundleArtifact& artifact, const LayoutDestination& destination);

} // namespace prewarm::push
