// SPDX-License-Identifier: Apache-2.0
#include "pack/manifest_signer.hpp"

#include "bundle/signature.hpp"

#include <fmt/format.h>

#include <set>

namespace prewarm::pack {

Result<std::string>
sign_manifest(std::string_view manifest_bytes, std::span<const PrivateKey> keys)
{
  if (keys.empty()) {
    return fail(Errc::usage, "no signing key given");
  }
  if (keys.size() > bundle::k_max_signature_lines) {
    return fail(Errc::usage, fmt::format("{} signing keys (an envelope holds at most {})", keys.size(), bundle::k_max_signature_lines));
  }
  const std::string message = bundle::pae(bundle::k_manifest_payload_type, manifest_bytes);
  bundle::SignatureEnvelope envelope;
  std::set<std::string> ids;
  for (const auto& key : keys) {
    if (!ids.insert(key.key_id()).second) {
      return fail(Errc::usage, fmt::format("signing key {} given twice", key.key_id()));
    }
    PW_ASSIGN(auto signature, key.sign(message));
    envelope.signatures.push_back(bundle::SignatureLine{key.key_id(), std::move(signature)});
  }
  return bundle::serialize(envelope);
}

} // namespace prewarm::pack
