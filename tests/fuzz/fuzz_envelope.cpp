// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the signature envelope parser and the threshold counting
// (signature.hpp). Input: envelope bytes. Invariants: no crash/UB; a parsed
// envelope re-serializes identically; no envelope verifies the fixed
// manifest under a key that never signed it.
#include "bundle/signature.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

// An Ed25519 public key nobody holds the private half of (RFC 8032 test 1's
// public key): a fuzzer cannot produce a valid signature under it.
prewarm::bundle::TrustStore
trust()
{
  static const char* const pem = "-----BEGIN PUBLIC KEY-----\n"
                                 "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
                                 "-----END PUBLIC KEY-----\n";
  prewarm::bundle::TrustStore store;
  store.keys.push_back({*prewarm::bundle::PublicKey::from_pem(pem), std::nullopt, std::nullopt});
  return store;
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  static const auto store = trust();
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto envelope = prewarm::bundle::parse_envelope(bytes);
  if (envelope && prewarm::bundle::serialize(*envelope) != bytes) {
    std::abort();
  }
  const auto verified = prewarm::bundle::verified_signers("prewarm-bundle 1\n", bytes, store, prewarm::now_seconds());
  if (verified) {
    std::abort(); // a forged signature verified
  }
  return 0;
}
