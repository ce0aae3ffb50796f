// SPDX-License-Identifier: Apache-2.0
// The signature envelope (BUNDLE/manifest.sig) and manifest verification.
//
// What is signed is PAE(k_manifest_payload_type, manifest bytes), DSSE's
// pre-authentication encoding:
//   "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body     (LEN: ASCII decimal)
// so a signature over the raw manifest, or over the same bytes as another
// type, never verifies (domain separation).
//
// Envelope grammar (strict, one spelling; <= 64 KiB, <= 32 sig lines):
//   envelope := "prewarm-signature 1" LF sig+
//   sig      := "sig ed25519 " KEYID " " BASE64 LF
//   KEYID    := 64 lowercase hex (a lookup hint: trust comes from the store)
//   BASE64   := canonical RFC 4648 base64 of exactly 64 bytes
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/trust.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::bundle {

inline constexpr std::string_view k_manifest_payload_type = "application/vnd.prewarm.manifest.v1";
inline constexpr std::size_t k_max_envelope_bytes = 64 * 1024;
inline constexpr std::size_t k_max_signature_lines = 32;

std::string pae(std::string_view payload_type, std::string_view body);

struct SignatureLine
{
  std::string key_id;    // 64 lowercase hex
  std::string signature; // 64 raw bytes
  auto operator<=>(const SignatureLine&) const = default;
};

struct SignatureEnvelope
{
  std::vector<SignatureLine> signatures;
};

std::string serialize(const SignatureEnvelope& envelope);
// Errc::verify E_SIG_FORMAT naming the line (E_LIMIT for size / line count).
Result<SignatureEnvelope> parse_envelope(std::string_view bytes);

// Checks that at least trust.threshold distinct trusted keys signed
// PAE(manifest). For each sig line, every trusted key is tried (the key id
// is a hint: a line naming key A but signed by B counts for B if B is
// trusted). Each key counts once however many lines it signed. Keys that are
// revoked or outside not_before/not_after at `now` do not count.
// Failures (Errc::verify), the most specific one that explains the outcome:
//   E_SIG_FORMAT        envelope does not parse
//   E_LIMIT             envelope too large / too many lines
//   E_KEY_REVOKED       a valid signature, but only by revoked keys
//   E_KEY_EXPIRED       a valid signature, but only by keys outside validity
//   E_SIG_UNTRUSTED_KEY no signature verifies and a line names a key not in the store
//   E_SIG               no signature verifies under any trusted key
//   E_THRESHOLD         some valid signers, fewer than the threshold
// On success returns the key ids that counted, sorted.
Result<std::vector<std::string>> verified_signers(std::string_view manifest_bytes,
                                                  std::string_view envelope_bytes,
                                                  const TrustStore& trust,
                                                  SysSeconds now);

// verified_signers() without the list.
Status verify_manifest_signature(std::string_view manifest_bytes,
                                 std::string_view envelope_bytes,
                                 const TrustStore& trust,
                                 SysSeconds now);

} // namespace prewarm::bundle
