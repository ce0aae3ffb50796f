// SPDX-License-Identifier: Apache-2.0
// A registry reference, as Docker and the OCI distribution spec write it:
//
//   reference  := ["oci://"] registry "/" repository [":" tag] ["@" digest]
//   registry   := host [":" port]            (always written out: no implied docker.io)
//   repository := component ("/" component)*  component := [a-z0-9]+ ([._-]+|__ [a-z0-9]+)*
//   tag        := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
//   digest     := "sha256:" 64 lowercase hex
//
// The runtime installs only from references pinned by digest; a tag is for
// the builder's push and for people.
#pragma once

#include "base/error.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace prewarm::registry {

inline constexpr std::string_view k_oci_scheme = "oci://";

struct ImageReference
{
  std::string registry;   // "127.0.0.1:5000", "ghcr.io"
  std::string repository; // "team/bundles"
  std::string tag;        // may be empty
  std::string digest;     // "sha256:<hex>", may be empty

  // registry/repository[:tag][@digest]
  std::string to_string() const;
  // The same reference pinned to another digest (a referrer, a pushed manifest).
  ImageReference with_digest(std::string digest) const;
};

// Errc::usage naming the reference and what is wrong with it.
Result<ImageReference> parse_image_reference(std::string_view text);

// As parse_image_reference(), and a digest is required (E_UNPINNED otherwise).
Result<ImageReference> parse_pinned_reference(std::string_view text);

// "sha256:" followed by 64 lowercase hex digits.
bool is_sha256_digest(std::string_view text);

// True for "oci://...", for anything holding '@' (a digest, whatever its
// algorithm), and for REGISTRY[:PORT]/REPO[:TAG] with a port or a tag: a
// tag or a sha512 digest is then refused by name (E_UNPINNED, E_REFERENCE)
// instead of being read as a missing directory. A path that exists is taken
// as a directory first.
bool looks_like_registry_reference(std::string_view text);

} // namespace prewarm::registry
