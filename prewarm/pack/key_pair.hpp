// SPDX-License-Identifier: Apache-2.0
// Ed25519 signing keys for bundles (builder side only; the runtime verifies
// with bundle/public_key.hpp and never links this).
//
// Files: <prefix>.key  PKCS#8 PEM private key, mode 0600
//        <prefix>.pub  SubjectPublicKeyInfo PEM (give this to the runtime)
#pragma once

#include "base/error.hpp"
#include "bundle/public_key.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

struct evp_pkey_st;

namespace prewarm::pack {

enum class ExistingKeyFiles { refuse, replace };

struct KeyFiles
{
  std::filesystem::path private_key; // <prefix>.key
  std::filesystem::path public_key;  // <prefix>.pub
  std::string key_id;
};

// Generates a key pair. The .key file is created 0600 with O_EXCL (never
// world-readable, not even for a moment). With ExistingKeyFiles::refuse an
// existing file is an error naming it (Errc::usage); ::replace writes new
// files beside the old ones and renames them over.
Result<KeyFiles> generate_key_pair(const std::filesystem::path& out_prefix,
                                   ExistingKeyFiles existing = ExistingKeyFiles::refuse);

class PrivateKey
{
public:
  // Reads a PKCS#8 PEM Ed25519 key. A key file readable by group or others is
  // refused (Errc::usage, hint: chmod 600).
  static Result<PrivateKey> load(const std::filesystem::path& key_file);
  static Result<PrivateKey> from_pem(std::string_view pem, std::string_view origin = "private key");
  // A fresh key in memory (tests, keygen).
  static Result<PrivateKey> generate();

  // One-shot Ed25519 (PureEdDSA) signature: 64 bytes.
  Result<std::string> sign(std::string_view message) const;

  const bundle::PublicKey& public_key() const { return m_public; }
  const std::string& key_id() const { return m_public.key_id(); }
  std::string to_pem() const; // PKCS#8

private:
  PrivateKey(std::shared_ptr<evp_pkey_st> key, bundle::PublicKey public_key);
  std::shared_ptr<evp_pkey_st> m_key;
  bundle::PublicKey m_public;
};

} // namespace prewarm::pack
