// SPDX-License-Identifier: Apache-2.0
#include "bundle/signature.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace prewarm::bundle {

namespace {

constexpr std::string_view k_envelope_magic = "prewarm-signature 1";
constexpr std::string_view k_sig_prefix = "sig ed25519 ";

std::unexpected<Error>
envelope_error(std::size_t line, std::string_view why)
{
  return fail(Errc::verify, fmt::format("manifest.sig:{}: {}", line, why), "E_SIG_FORMAT");
}

} // namespace

std::string
pae(std::string_view payload_type, std::string_view body)
{
  // The header formatted, the body appended once: the body is the whole
  // manifest (a megabyte at 10,000 files), verified at every container start.
  std::string message = fmt::format("DSSEv1 {} {} {} ", payload_type.size(), payload_type, body.size());
  message.reserve(message.size() + body.size());
  message.append(body);
  return message;
}

std::string
serialize(const SignatureEnvelope& envelope)
{
  std::string out(k_envelope_magic);
  out.push_back('\n');
  for (const auto& line : envelope.signatures) {
    out += fmt::format("{}{} {}\n", k_sig_prefix, line.key_id, base64_encode(line.signature));
  }
  return out;
}

Result<SignatureEnvelope>
parse_envelope(std::string_view bytes)
{
  if (bytes.size() > k_max_envelope_bytes) {
    return fail(Errc::verify, fmt::format("manifest.sig: {} bytes (at most {})", bytes.size(), k_max_envelope_bytes), "E_LIMIT");
  }
  if (bytes.empty() || bytes.back() != '\n') {
    return envelope_error(1, "empty or not ending in a line feed (truncated?)");
  }
  SignatureEnvelope envelope;
  std::size_t line_no = 0;
  while (!bytes.empty()) {
    ++line_no;
    const auto lf = bytes.find('\n');
    const auto line = bytes.substr(0, lf);
    bytes.remove_prefix(lf + 1);
    if (line_no == 1) {
      if (line != k_envelope_magic) {
        return envelope_error(1, fmt::format("expected {}", in_quotes(k_envelope_magic)));
      }
      continue;
    }
    if (envelope.signatures.size() >= k_max_signature_lines) {
      return fail(Errc::verify, fmt::format("manifest.sig: more than {} signature lines", k_max_signature_lines), "E_LIMIT");
    }
    if (!line.starts_with(k_sig_prefix)) {
      return envelope_error(line_no, "expected \"sig ed25519 KEYID SIGNATURE\"");
    }
    const auto rest = line.substr(k_sig_prefix.size());
    if (rest.size() < 66 || rest[64] != ' ' || !is_lower_hex(rest.substr(0, 64), 64)) {
      return envelope_error(line_no, "key id is not 64 lowercase hex digits followed by one space");
    }
    const auto decoded = base64_decode(rest.substr(65));
    if (!decoded) {
      return envelope_error(line_no, "signature is not canonical base64");
    }
    if (decoded->size() != k_ed25519_signature_size) {
      return envelope_error(line_no, fmt::format("signature is {} bytes (Ed25519: {})", decoded->size(), k_ed25519_signature_size));
    }
    envelope.signatures.push_back(SignatureLine{std::string(rest.substr(0, 64)), *decoded});
  }
  if (envelope.signatures.empty()) {
    return envelope_error(line_no + 1, "no signature lines");
  }
  return envelope;
}

Result<std::vector<std::string>>
verified_signers(std::string_view manifest_bytes,
                 std::string_view envelope_bytes,
                 const TrustStore& trust,
                 SysSeconds now)
{
  PW_TRY(validate_trust_store(trust));
  PW_ASSIGN(const auto envelope, parse_envelope(envelope_bytes));
  const std::string message = pae(k_manifest_payload_type, manifest_bytes);

  std::set<std::string> good;      // trusted, not revoked, within validity
  std::set<std::string> revoked;   // valid signatures by revoked keys
  std::set<std::string> expired;   // valid signatures by keys outside validity
  bool names_untrusted_key = false;
  for (const auto& line : envelope.signatures) {
    const auto named = std::find_if(trust.keys.begin(), trust.keys.end(),
                                    [&](const TrustedKey& k) { return k.key.key_id() == line.key_id; });
    if (named == trust.keys.end()) {
      names_untrusted_key = true;
    }
    // The key id is a hint: try the named key first, then every other one,
    // so trust is decided by key bytes alone.
    const TrustedKey* signer = nullptr;
    if (named != trust.keys.end() && named->key.verify(message, line.signature)) {
      signer = &*named;
    } else {
      for (const auto& candidate : trust.keys) {
        if (&candidate != (named == trust.keys.end() ? nullptr : &*named) &&
            candidate.key.verify(message, line.signature)) {
          signer = &candidate;
          break;
        }
      }
    }
    if (signer == nullptr) {
      continue;
    }
    const auto& id = signer->key.key_id();
    if (std::find(trust.revoked_key_ids.begin(), trust.revoked_key_ids.end(), id) != trust.revoked_key_ids.end()) {
      revoked.insert(id);
    } else if ((signer->not_before && now < *signer->not_before) || (signer->not_after && now > *signer->not_after)) {
      expired.insert(id);
    } else {
      good.insert(id); // a set: each key counts once however many lines it signed
    }
  }
  if (good.size() >= trust.threshold) {
    return std::vector<std::string>(good.begin(), good.end());
  }
  if (!good.empty()) {
    return fail(Errc::verify,
                fmt::format("manifest.sig: {} distinct trusted key(s) signed, {} required", good.size(), trust.threshold),
                "E_THRESHOLD");
  }
  if (!revoked.empty()) {
    return fail(Errc::verify, fmt::format("manifest.sig: signed only by revoked key {}", *revoked.begin()), "E_KEY_REVOKED");
  }
  if (!expired.empty()) {
    return fail(Errc::verify,
                fmt::format("manifest.sig: signed only by key {}, which is outside its validity period at {}",
                            *expired.begin(), format_rfc3339(now)),
                "E_KEY_EXPIRED");
  }
  if (names_untrusted_key) {
    return fail(Errc::verify, "manifest.sig: no signature verifies with a trusted key; it names a key that is not trusted "
                              "(was the bundle signed with another key?)",
                "E_SIG_UNTRUSTED_KEY");
  }
  return fail(Errc::verify, "manifest.sig: no signature verifies over the manifest (manifest or signature altered?)", "E_SIG");
}

Status
verify_manifest_signature(std::string_view manifest_bytes,
                          std::string_view envelope_bytes,
                          const TrustStore& trust,
                          SysSeconds now)
{
  PW_TRY(verified_signers(manifest_bytes, envelope_bytes, trust, now));
  return {};
}

} // namespace prewarm::bundle
