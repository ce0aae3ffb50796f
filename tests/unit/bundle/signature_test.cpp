// SPDX-License-Identifier: Apache-2.0
#include "bundle_test_support.hpp"

#include "base/encoding.hpp"
#include "bundle/public_key.hpp"
#include "bundle/signature.hpp"
#include "bundle/trust.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

namespace prewarm::bundle {
namespace {

using pack::PrivateKey;

const std::string k_manifest = "prewarm-bundle 1\nchannel default\n";

PrivateKey
new_key()
{
  auto key = PrivateKey::generate();
  EXPECT_TRUE(key);
  return *key;
}

std::string
envelope_of(std::vector<SignatureLine> lines)
{
  return serialize(SignatureEnvelope{std::move(lines)});
}

SignatureLine
line(const PrivateKey& key, std::string_view message, std::string key_id = {})
{
  return SignatureLine{key_id.empty() ? key.key_id() : key_id, *key.sign(message)};
}

std::string
signed_envelope(const PrivateKey& key, std::string_view manifest = k_manifest)
{
  return envelope_of({line(key, pae(k_manifest_payload_type, manifest))});
}

void
expect_code(const Status& status, std::string_view code)
{
  ASSERT_FALSE(status) << "expected " << code;
  EXPECT_EQ(status.error().category(), Errc::verify);
  EXPECT_EQ(status.error().code(), code) << status.error().message();
}

const SysSeconds k_now = test::test_time(1);

TEST(Pae, DsseSpecVector)
{
  EXPECT_EQ(pae("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  EXPECT_EQ(pae("", ""), "DSSEv1 0  0 ");
}

TEST(PublicKey, KeyIdIsSha256OfSpkiDer)
{
  const auto key = new_key();
  EXPECT_EQ(key.key_id(), sha256_hex(key.public_key().der()));
  EXPECT_EQ(key.key_id().size(), 64u);
  const auto reloaded = PublicKey::from_pem(key.public_key().to_pem());
  ASSERT_TRUE(reloaded) << reloaded.error().message();
  EXPECT_EQ(reloaded->key_id(), key.key_id());
  EXPECT_EQ(key.public_key().der().size(), 44u); // Ed25519 SPKI
}

TEST(PublicKey, RejectsNonEd25519AndGarbage)
{
  EVP_PKEY* rsa = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(2048));
  ASSERT_NE(rsa, nullptr);
  BIO* bio = BIO_new(BIO_s_mem());
  ASSERT_EQ(PEM_write_bio_PUBKEY(bio, rsa), 1);
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  const std::string pem(data, static_cast<std::size_t>(length));
  BIO_free(bio);
  EVP_PKEY_free(rsa);
  const auto key = PublicKey::from_pem(pem);
  ASSERT_FALSE(key);
  EXPECT_NE(key.error().message().find("Ed25519"), std::string::npos);
  EXPECT_FALSE(PublicKey::from_pem("not a key"));
}

TEST(Signature, GoodSignatureVerifies)
{
  const auto key = new_key();
  const auto signers = verified_signers(k_manifest, signed_envelope(key), test::trust_of(key), k_now);
  ASSERT_TRUE(signers) << signers.error().message();
  EXPECT_EQ(*signers, std::vector<std::string>{key.key_id()});
  EXPECT_TRUE(verify_manifest_signature(k_manifest, signed_envelope(key), test::trust_of(key), k_now));
}

TEST(Signature, ChangedManifestByteFails)
{
  const auto key = new_key();
  std::string changed = k_manifest;
  changed[20] ^= 0x01;
  expect_code(verify_manifest_signature(changed, signed_envelope(key), test::trust_of(key), k_now), "E_SIG");
}

TEST(Signature, FlippedSignatureBitFails)
{
  const auto key = new_key();
  auto sig = line(key, pae(k_manifest_payload_type, k_manifest));
  sig.signature[10] ^= 0x04;
  expect_code(verify_manifest_signature(k_manifest, envelope_of({sig}), test::trust_of(key), k_now), "E_SIG");
}

TEST(Signature, WrongKeyIsUntrusted)
{
  const auto signer = new_key();
  const auto trusted = new_key();
  expect_code(verify_manifest_signature(k_manifest, signed_envelope(signer), test::trust_of(trusted), k_now),
              "E_SIG_UNTRUSTED_KEY");
}

TEST(Signature, KeyIdIsOnlyAHint)
{
  const auto a = new_key();
  const auto b = new_key();
  const auto message = pae(k_manifest_payload_type, k_manifest);
  // Names trusted A, signed by untrusted B: fails.
  expect_code(verify_manifest_signature(k_manifest, envelope_of({line(b, message, a.key_id())}), test::trust_of(a), k_now),
              "E_SIG");
  // Names B, signed by trusted A: A's bytes decide, so it verifies.
  EXPECT_TRUE(verify_manifest_signature(k_manifest, envelope_of({line(a, message, b.key_id())}), test::trust_of(a), k_now));
}

TEST(Signature, RawManifestSignatureWithoutPaeFails)
{
  const auto key = new_key();
  expect_code(verify_manifest_signature(k_manifest, envelope_of({line(key, k_manifest)}), test::trust_of(key), k_now), "E_SIG");
}

TEST(Signature, OtherPayloadTypeFails)
{
  const auto key = new_key();
  const auto other = pae("application/vnd.prewarm.other", k_manifest);
  expect_code(verify_manifest_signature(k_manifest, envelope_of({line(key, other)}), test::trust_of(key), k_now), "E_SIG");
}

TEST(Signature, TruncatedAndMalformedEnvelopes)
{
  const auto key = new_key();
  const auto good = signed_envelope(key);
  const auto trust = test::trust_of(key);
  const auto sig_line = line(key, pae(k_manifest_payload_type, k_manifest));
  // 63-byte signature.
  const auto short_sig = fmt::format("prewarm-signature 1\nsig ed25519 {} {}\n", key.key_id(), base64_encode(sig_line.signature.substr(0, 63)));
  expect_code(verify_manifest_signature(k_manifest, short_sig, trust, k_now), "E_SIG_FORMAT");
  // Invalid / non-canonical base64.
  auto bad64 = good;
  bad64[bad64.size() - 3] = '!';
  expect_code(verify_manifest_signature(k_manifest, bad64, trust, k_now), "E_SIG_FORMAT");
  // Cut anywhere.
  expect_code(verify_manifest_signature(k_manifest, good.substr(0, good.size() - 1), trust, k_now), "E_SIG_FORMAT");
  expect_code(verify_manifest_signature(k_manifest, good.substr(0, 40), trust, k_now), "E_SIG_FORMAT");
  expect_code(verify_manifest_signature(k_manifest, "prewarm-signature 1\n", trust, k_now), "E_SIG_FORMAT");
  expect_code(verify_manifest_signature(k_manifest, "", trust, k_now), "E_SIG_FORMAT");
  // CRLF, wrong magic, uppercase key id, other algorithm.
  auto crlf = good;
  crlf.insert(crlf.size() - 1, "\r");
  expect_code(verify_manifest_signature(k_manifest, crlf, trust, k_now), "E_SIG_FORMAT");
  expect_code(verify_manifest_signature(k_manifest, "prewarm-signature 2" + good.substr(19), trust, k_now), "E_SIG_FORMAT");
  std::string upper = good;
  for (std::size_t i = 32; i < 32 + 64; ++i) {
    upper[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(upper[i])));
  }
  expect_code(verify_manifest_signature(k_manifest, upper, trust, k_now), "E_SIG_FORMAT");
  auto ecdsa = good;
  ecdsa.replace(ecdsa.find("ed25519"), 7, "ecdsa25");
  expect_code(verify_manifest_signature(k_manifest, ecdsa, trust, k_now), "E_SIG_FORMAT");
}

TEST(Signature, DuplicateLinesCountOnce)
{
  const auto key = new_key();
  auto trust = test::trust_of(key);
  trust.keys.push_back(TrustedKey{new_key().public_key(), std::nullopt, std::nullopt});
  trust.threshold = 2;
  const auto sig = line(key, pae(k_manifest_payload_type, k_manifest));
  expect_code(verify_manifest_signature(k_manifest, envelope_of({sig, sig}), trust, k_now), "E_THRESHOLD");
}

TEST(Signature, ThresholdTwoDistinctKeys)
{
  const auto a = new_key();
  const auto b = new_key();
  TrustStore trust;
  trust.keys = {TrustedKey{a.public_key(), {}, {}}, TrustedKey{b.public_key(), {}, {}}};
  trust.threshold = 2;
  const auto message = pae(k_manifest_payload_type, k_manifest);
  const auto signers = verified_signers(k_manifest, envelope_of({line(a, message), line(b, message)}), trust, k_now);
  ASSERT_TRUE(signers) << signers.error().message();
  EXPECT_EQ(signers->size(), 2u);
  // One valid + one garbage from the other trusted key: below threshold 2 ...
  auto garbage = line(b, message);
  garbage.signature[0] ^= 0x01;
  expect_code(verify_manifest_signature(k_manifest, envelope_of({line(a, message), garbage}), trust, k_now), "E_THRESHOLD");
  // ... but enough for threshold 1.
  trust.threshold = 1;
  EXPECT_TRUE(verify_manifest_signature(k_manifest, envelope_of({line(a, message), garbage}), trust, k_now));
}

TEST(Signature, RevokedKey)
{
  const auto key = new_key();
  auto trust = test::trust_of(key);
  trust.revoked_key_ids.push_back(key.key_id());
  expect_code(verify_manifest_signature(k_manifest, signed_envelope(key), trust, k_now), "E_KEY_REVOKED");
}

TEST(Signature, KeyOutsideValidity)
{
  const auto key = new_key();
  auto trust = test::trust_of(key);
  trust.keys[0].not_after = k_now - std::chrono::seconds(1);
  expect_code(verify_manifest_signature(k_manifest, signed_envelope(key), trust, k_now), "E_KEY_EXPIRED");
  trust.keys[0].not_after.reset();
  trust.keys[0].not_before = k_now + std::chrono::hours(1);
  expect_code(verify_manifest_signature(k_manifest, signed_envelope(key), trust, k_now), "E_KEY_EXPIRED");
  trust.keys[0].not_before = k_now;
  EXPECT_TRUE(verify_manifest_signature(k_manifest, signed_envelope(key), trust, k_now));
}

TEST(Signature, LimitsOnEnvelope)
{
  const auto key = new_key();
  const auto sig = line(key, pae(k_manifest_payload_type, k_manifest));
  expect_code(verify_manifest_signature(k_manifest, envelope_of(std::vector<SignatureLine>(33, sig)), test::trust_of(key), k_now), "E_LIMIT");
  EXPECT_TRUE(verify_manifest_signature(k_manifest, envelope_of(std::vector<SignatureLine>(32, sig)), test::trust_of(key), k_now));
  expect_code(verify_manifest_signature(k_manifest, std::string(k_max_envelope_bytes + 1, 'a'), test::trust_of(key), k_now), "E_LIMIT");
}

TEST(Signature, Ed25519EdgeCasesRejected)
{
  const auto key = new_key();
  const auto message = pae(k_manifest_payload_type, k_manifest);
  // All-zero signature.
  expect_code(verify_manifest_signature(k_manifest, envelope_of({SignatureLine{key.key_id(), std::string(64, '\0')}}), test::trust_of(key), k_now), "E_SIG");
  // Non-canonical S: S + L (little endian) verifies mathematically but must be rejected.
  auto sig = line(key, message);
  static const unsigned char k_l[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                        0xa2, 0xde, 0xf9, 0xde, 0x14, 0,    0,    0,    0,    0,    0,
                                        0,    0,    0,    0,    0,    0,    0,    0,    0,    0x10};
  unsigned carry = 0;
  for (int i = 0; i < 32; ++i) {
    const unsigned sum = static_cast<unsigned char>(sig.signature[32 + i]) + k_l[i] + carry;
    sig.signature[32 + i] = static_cast<char>(sum & 0xff);
    carry = sum >> 8;
  }
  ASSERT_EQ(carry, 0u);
  expect_code(verify_manifest_signature(k_manifest, envelope_of({sig}), test::trust_of(key), k_now), "E_SIG");
}

TEST(TrustStore, Validation)
{
  const auto key = new_key();
  auto trust = test::trust_of(key);
  trust.threshold = 2;
  EXPECT_FALSE(validate_trust_store(trust));
  EXPECT_EQ(validate_trust_store(trust).error().category(), Errc::usage);
  trust.threshold = 0;
  EXPECT_FALSE(validate_trust_store(trust));
  trust.threshold = 1;
  trust.keys.push_back(trust.keys[0]);
  EXPECT_FALSE(validate_trust_store(trust));
}

TEST(TrustStore, LoadFromPublicKeyFile)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  const auto key = new_key();
  test::write_bytes(dir->path() / "test_only.pub", key.public_key().to_pem());
  const auto trust = load_trust_from_public_key(dir->path() / "test_only.pub");
  ASSERT_TRUE(trust) << trust.error().message();
  ASSERT_EQ(trust->keys.size(), 1u);
  EXPECT_EQ(trust->keys[0].key.key_id(), key.key_id());
  EXPECT_EQ(trust->threshold, 1u);
  EXPECT_FALSE(load_trust_from_public_key(dir->path() / "missing.pub"));
}

} // namespace
} // namespace prewarm::bundle
