// SPDX-License-Identifier: Apache-2.0
#include "bundle/public_key.hpp"
#include "bundle/openssl_error.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace prewarm::bundle {

namespace {

constexpr std::uint64_t k_max_public_key_file = 16 * 1024;

Result<std::string>
spki_der(EVP_PKEY* key)
{
  unsigned char* der = nullptr;
  const int length = i2d_PUBKEY(key, &der);
  if (length <= 0) {
    return fail(Errc::internal, "cannot encode a public key: " + openssl_error());
  }
  std::string out(reinterpret_cast<const char*>(der), static_cast<std::size_t>(length));
  OPENSSL_free(der);
  return out;
}

} // namespace

PublicKey::PublicKey(std::shared_ptr<evp_pkey_st> key, std::string der)
  : m_key(std::move(key)), m_der(std::move(der)), m_key_id(sha256_hex(m_der))
{
}

Result<PublicKey>
PublicKey::from_pem(std::string_view pem, std::string_view origin)
{
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) {
    return fail(Errc::internal, "BIO_new_mem_buf failed");
  }
  EVP_PKEY* raw = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  if (raw == nullptr) {
    return fail(Errc::usage, fmt::format("{}: not a PEM public key (\"BEGIN PUBLIC KEY\"): {}", origin, openssl_error()));
  }
  std::shared_ptr<evp_pkey_st> key(raw, &EVP_PKEY_free);
  if (EVP_PKEY_get_id(raw) != EVP_PKEY_ED25519) {
    return fail(Errc::usage, fmt::format("{}: a {} key; prewarm bundles are signed with Ed25519", origin, OBJ_nid2sn(EVP_PKEY_get_id(raw))));
  }
  PW_ASSIGN(auto der, spki_der(raw));
  return PublicKey(std::move(key), std::move(der));
}

Result<PublicKey>
PublicKey::load(const std::filesystem::path& pub_file)
{
  PW_ASSIGN_CTX(const auto pem, fmt::format("public key {}", in_quotes(pub_file.string())),
                read_file(pub_file.string(), k_max_public_key_file));
  return from_pem(pem, pub_file.string());
}

Result<PublicKey>
PublicKey::from_der(std::string_view der)
{
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  EVP_PKEY* raw = d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size()));
  if (raw == nullptr) {
    return fail(Errc::usage, "not a DER SubjectPublicKeyInfo: " + openssl_error());
  }
  std::shared_ptr<evp_pkey_st> key(raw, &EVP_PKEY_free);
  if (EVP_PKEY_get_id(raw) != EVP_PKEY_ED25519) {
    return fail(Errc::usage, "not an Ed25519 key");
  }
  PW_ASSIGN(auto canonical, spki_der(raw));
  if (canonical != der) {
    // Trailing bytes or a second encoding of the same key: one key, one id.
    return fail(Errc::usage, "DER SubjectPublicKeyInfo is not in canonical form");
  }
  return PublicKey(std::move(key), std::move(canonical));
}

std::string
PublicKey::to_pem() const
{
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), m_key.get()) != 1) {
    return {};
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(length));
}

bool
PublicKey::verify(std::string_view message, std::string_view signature) const
{
  if (signature.size() != k_ed25519_signature_size || !m_key) {
    return false;
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, m_key.get()) != 1) {
    ERR_clear_error();
    return false;
  }
  // PureEdDSA: one shot over the whole message, no digest (md NULL).
  const int ok = EVP_DigestVerify(ctx.get(),
                                  reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                                  reinterpret_cast<const unsigned char*>(message.data()), message.size());
  ERR_clear_error();
  return ok == 1;
}

} // namespace prewarm::bundle
