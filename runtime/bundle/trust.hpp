// SPDX-License-Identifier: Apache-2.0
// What a verifier trusts: keys (with optional validity windows), revoked key
// ids and how many distinct trusted keys must sign. A plain struct on purpose:
// today it comes from one .pub file; the trust policy file (YAML, baked into
// the image) fills the same struct later.
// Signature checking against it: signature.hpp verify_manifest_signature().
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/public_key.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::bundle {

struct TrustedKey
{
  PublicKey key;
  std::optional<SysSeconds> not_before; // signatures count only from then on
  std::optional<SysSeconds> not_after;  // ... and until then (inclusive)
};

struct TrustStore
{
  std::vector<TrustedKey> keys;
  std::vector<std::string> revoked_key_ids; // lowercase hex key ids
  unsigned threshold = 1;                   // distinct valid signers needed
};

// One key from a .pub file, no validity window, threshold 1.
Result<TrustStore> load_trust_from_public_key(const std::filesystem::path& pub_file);

// Threshold >= 1, no key listed twice, threshold <= number of keys
// (Errc::usage: a store that can never verify anything is a config error).
Status validate_trust_store(const TrustStore& trust);

} // namespace prewarm::bundle
