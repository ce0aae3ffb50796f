// SPDX-License-Identifier: Apache-2.0
// Pushing a bundle artifact to a registry (distribution spec "push"):
//   blobs:    HEAD (present: skipped), else POST an upload and PUT it whole
//             with ?digest= (monolithic upload)
//   manifest: PUT /v2/<name>/manifests/<tag or digest>; the registry's
//             Docker-Content-Digest must equal ours
//   subject:  a registry with the referrers API answers the PUT with an
//             OCI-Subject header; without it, the pusher maintains the
//             fallback index under the tag sha256-<hex of the subject>: read
//             it (404: a new one), add this manifest's descriptor, PUT it
//             back. Two pushers racing on one subject can lose an entry (the
//             spec's fallback has no compare-and-swap); push again to repair.
#pragma once

#include "base/error.hpp"
#include "push/bundle_artifact.hpp"
#include "registry/image_reference.hpp"
#include "registry/oci_document.hpp"
#include "registry/registry_client.hpp"

#include <string>

namespace prewarm::push {

// The descriptor of a pinned image (the subject): its manifest fetched by
// digest, digest checked, media type from the document or Content-Type.
Result<registry::Descriptor> resolve_subject(const registry::ImageReference& image,
                                             const registry::ClientOptions& options);

struct PushResult
{
  std::string digest;              // of the pushed OCI manifest
  bool referrers_tag_updated = false;
  std::size_t blobs_uploaded = 0;
  std::size_t blobs_present = 0;
};

Result<PushResult> push_to_registry(const BundleArtifact& artifact,
                                    const registry::ImageReference& target,
                                    const registry::ClientOptions& options);

} // namespace prewarm::push
