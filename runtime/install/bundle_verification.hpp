// SPDX-License-Identifier: Apache-2.0
// Verifying a bundle directory before anything of it is trusted, in this
// order (signing-archives.md §6.4):
//   1. read BUNDLE/manifest and BUNDLE/manifest.sig with size caps
//   2. signature over PAE(manifest) against the trust store  (E_SIG...)
//   3. parse the verified bytes, strictly                    (E_MANIFEST_FORMAT)
//      then the trust policy's rules (E_PIN, E_CHANNEL, E_ROLLBACK, E_LIMIT,
//      E_POLICY_KIND; bundle/trust_policy.hpp)
//   4. time: issued-at not beyond now + skew (E_CLOCK), expires not before
//      now - skew (E_EXPIRED); ExpiryPolicy::warn turns both into warnings
//      for hosts whose clock cannot be trusted at boot
//   5. payload size + SHA-256 of each slice (E_PAYLOAD_SIZE, E_PAYLOAD_DIGEST),
//      before any archive parser sees a byte
// verify_manifest() does 1-4; the installer hashes only the slices it selected
// (extract_slice() checks the digest before reading). verify_bundle() does all
// five for every slice (`prewarm-runtime verify`).
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/trust.hpp"
#include "bundle/trust_policy.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace prewarm::install {

enum class ExpiryPolicy { enforce, warn };

struct VerifyOptions
{
  ExpiryPolicy expiry = ExpiryPolicy::enforce;
  std::chrono::seconds clock_skew{300};
  // Trust policy rules on the verified manifest (pin, channel, min serial,
  // declared sizes, kinds); checked after parsing, before the time checks.
  bundle::ManifestPolicy policy;
};

struct VerifiedBundle
{
  std::filesystem::path dir;
  std::string manifest_bytes;  // exactly the signed bytes
  std::string manifest_sha256; // their digest: the bundle's identity
  bundle::BundleManifest manifest;
  std::vector<std::string> signer_key_ids;
  std::vector<std::string> warnings; // e.g. expired under ExpiryPolicy::warn
  bool payloads_verified = false;
};

Result<VerifiedBundle> verify_manifest(const std::filesystem::path& dir,
                                       const bundle::TrustStore& trust,
                                       SysSeconds now,
                                       const VerifyOptions& options = {});

// verify_manifest() + every slice payload's size and digest.
Result<VerifiedBundle> verify_bundle(const std::filesystem::path& dir,
                                     const bundle::TrustStore& trust,
                                     SysSeconds now,
                                     const VerifyOptions& options = {});

// The time checks alone (step 4), for tests and for status.
Status check_validity_period(const bundle::BundleManifest& manifest,
                             SysSeconds now,
                             const VerifyOptions& options,
                             std::vector<std::string>& warnings);

} // namespace prewarm::install
