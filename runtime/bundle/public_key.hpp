// SPDX-License-Identifier: Apache-2.0
// Ed25519 public keys (OpenSSL 3 EVP). Verify-only: the runtime never links
// signing code; private keys live in prewarm/pack/key_pair.hpp.
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

struct evp_pkey_st; // OpenSSL's EVP_PKEY, kept out of this header

namespace prewarm::bundle {

inline constexpr std::size_t k_ed25519_signature_size = 64;

class PublicKey
{
public:
  // PEM "PUBLIC KEY" (SubjectPublicKeyInfo). Anything but Ed25519 is
  // Errc::usage; `origin` names the file in messages.
  static Result<PublicKey> from_pem(std::string_view pem, std::string_view origin = "public key");
  // Reads a .pub file (at most 16 KiB; a final symlink is not followed).
  static Result<PublicKey> load(const std::filesystem::path& pub_file);
  // From DER SubjectPublicKeyInfo.
  static Result<PublicKey> from_der(std::string_view der);

  // Lowercase hex SHA-256 of the DER SubjectPublicKeyInfo; the same as
  // `openssl pkey -pubin -outform DER | sha256sum`.
  const std::string& key_id() const { return m_key_id; }
  const std::string& der() const { return m_der; }
  std::string to_pem() const;

  // One-shot EVP_DigestVerify (md NULL, PureEdDSA) of `message`. False for a
  // signature that is not exactly 64 bytes.
  bool verify(std::string_view message, std::string_view signature) const;

  // The OpenSSL key; for the signing side in prewarm/pack only.
  evp_pkey_st* native_handle() const { return m_key.get(); }

private:
  PublicKey(std::shared_ptr<evp_pkey_st> key, std::string der);
  std::shared_ptr<evp_pkey_st> m_key; // immutable after construction: copies share it
  std::string m_der;
  std::string m_key_id;
};

} // namespace prewarm::bundle
