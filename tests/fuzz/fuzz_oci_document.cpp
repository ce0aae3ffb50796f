// SPDX-License-Identifier: Apache-2.0
// Fuzz target: what a registry sends before anything is verified by a
// signature (runtime/registry): the OCI manifest and image index readers
// (oci_document.hpp; the referrers index is not digest-pinned) and the
// WWW-Authenticate challenge parser (auth_challenge.hpp). Input: one document.
// Invariants: no crash/UB; every descriptor that is accepted has a sha256
// digest; the bundle's layers are found at most once each.
#include "registry/auth_challenge.hpp"
#include "registry/image_reference.hpp"
#include "registry/oci_document.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  using namespace prewarm::registry;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (const auto manifest = parse_oci_manifest(bytes)) {
    if (!is_sha256_digest(manifest->config.digest)) {
      std::abort();
    }
    for (const auto& layer : manifest->layers) {
      if (!is_sha256_digest(layer.digest)) {
        std::abort();
      }
    }
    (void)single_layer(*manifest, k_manifest_layer_type);
    (void)single_layer(*manifest, k_signature_layer_type);
  }
  if (const auto index = parse_oci_index(bytes)) {
    for (const auto& d : index->manifests) {
      if (!is_sha256_digest(d.digest)) {
        std::abort();
      }
    }
  }
  if (const auto challenge = parse_auth_challenge(bytes); challenge && challenge->scheme == AuthScheme::bearer &&
                                                          !challenge->realm.starts_with("https://")) {
    std::abort();
  }
  (void)parse_image_reference(bytes);
  return 0;
}
