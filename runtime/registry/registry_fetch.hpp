// SPDX-License-Identifier: Apache-2.0
// Reading from a registry with every byte checked against a digest the
// caller already trusts, and capped before it is stored:
//   - a manifest by digest: its SHA-256 must equal the pin (E_OCI_DIGEST);
//   - a small blob (the signed manifest, its signature) into memory: the
//     descriptor's size and digest (E_BLOB_SIZE, E_BLOB_DIGEST);
//   - a large blob (a slice) into a file: hashed while streaming, never more
//     than the expected size (E_LIMIT), resumed with a Range request from
//     what a failed try (or an earlier run) left in FILE.partial, renamed to
//     FILE only when the digest matches. The file is named relative to a
//     directory fd and opened without following a symlink; a new partial is
//     created O_EXCL, an old one is resumed only when it is a regular file
//     of this user with one link (a hard link would let the download write
//     a file elsewhere), anything else there is removed first.
// Transient failures (k_unavailable) are retried with backoff; a wrong
// digest is not (the registry answered, and the answer is wrong).
// The referrers lookup is the one unpinned read: an image index, capped
// (k_max_referrers_index_bytes: about 1,000 descriptors; anyone who can push
// to the repository can grow it) and parsed strictly (oci_document.hpp);
// whatever it names is then fetched by digest and verified by signature.
#pragma once

#include "base/error.hpp"
#include "registry/image_reference.hpp"
#include "registry/oci_document.hpp"
#include "registry/registry_client.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace prewarm::registry {

inline constexpr std::uint64_t k_max_referrers_index_bytes = std::uint64_t{256} << 10;

// GET /v2/<repository>/manifests/<digest>.
Result<std::string> fetch_pinned_manifest(RegistryClient& client, const ImageReference& pinned);

// GET /v2/<repository>/blobs/<digest> into memory; descriptor.size above
// `max_bytes` is refused before any request (E_LIMIT).
Result<std::string> fetch_small_blob(RegistryClient& client, const std::string& repository,
                                     const Descriptor& descriptor, std::uint64_t max_bytes);

// GET /v2/<repository>/blobs/<digest> into `name` in `dirfd` (see above;
// `where` names the directory in messages). A complete regular `name` with
// the right digest is kept without a request.
Status download_blob(RegistryClient& client, const std::string& repository, const std::string& digest,
                     std::uint64_t size, int dirfd, const std::string& name, std::string_view where);

// Removes `name` in `dirfd` whatever it is (a directory with its contents,
// emptied through fds; a symlink itself, never its target). Absent: fine.
Status remove_leftover(int dirfd, const std::string& name, std::string_view where);

// The manifests whose subject is `subject` (a pinned image) and whose
// artifactType is `artifact_type` (or not stated in the index: the caller
// checks each manifest's own): the referrers API, else the "sha256-<hex>"
// tag. None: an empty list.
Result<std::vector<Descriptor>> find_referrers(RegistryClient& client, const ImageReference& subject,
                                               std::string_view artifact_type);

} // namespace prewarm::registry
