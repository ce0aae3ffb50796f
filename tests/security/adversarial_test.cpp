// SPDX-License-Identifier: Apache-2.0
// signing-archives.md §7 groups A-E end to end through prewarm-runtime, each
// with the full REJECT/SKIP guarantees (security_support.hpp). Unit tests of
// bundle/ and install/ already cover single checks in-process (tampered
// payload, wrong key, truncated manifest, expired via --expiry, rollback and
// equivocation by the state file, not applicable, lock timeout, ...); this
// suite adds the cases they do not have and the trust policy's rules, and
// checks the whole outcome for each: exit code, named error, cache
// byte-identical, no staging, nothing outside the root.
#include "security_support.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/signature.hpp"
#include "bundle_test_support.hpp"
#include "pack/manifest_signer.hpp"

#include <sys/stat.h>

#include <chrono>

using namespace prewarm;
using namespace prewarm::security_test;

namespace {

std::string
replace_once(std::string text, std::string_view from, std::string_view to)
{
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The envelope line's signature bytes, decoded.
std::string
signature_bytes(const fs::path& bundle)
{
  auto envelope = bundle::parse_envelope(slurp(bundle / bundle::k_signature_file));
  EXPECT_TRUE(envelope);
  return envelope->signatures.at(0).signature;
}

void
write_envelope(const fs::path& bundle, const std::vector<bundle::SignatureLine>& lines)
{
  bundle::SignatureEnvelope envelope{lines};
  write_text(bundle / bundle::k_signature_file, bundle::serialize(envelope));
}

} // namespace

// ---------------------------------------------------------------- A: signature

TEST_F(Security, A01_GoodBundleInstallsThenIsANoOp)
{
  const auto bundle = good_bundle();
  const auto first = install(bundle);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(test::tree_hash(root / "pocl"), [&] {
    const auto expected = dir.path() / "expected";
    test::write_tree(expected, newer_files());
    return test::tree_hash(expected / "pocl");
  }());
  const auto marker = slurp(root / ".prewarm/installed");
  EXPECT_NE(marker.find(sha256_hex(slurp(bundle / "manifest"))), std::string::npos) << marker;
  const auto mtimes = test::file_mtimes(root);
  const auto second = install(bundle);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("already installed"), std::string::npos) << second.out;
  EXPECT_EQ(test::file_mtimes(root), mtimes);
  EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
}

TEST_F(Security, A03_ManifestByteChangedAfterSigning)
{
  for (const std::string field : {"expires ", "file "}) {
    const auto bundle = copy_bundle(good_bundle(), "a03-" + field.substr(0, 4));
    auto text = slurp(bundle / "manifest");
    const auto at = text.find("\n" + field) + 1 + field.size();
    text[at] = text[at] == '2' ? '3' : '2'; // a year / digest digit
    write_text(bundle / "manifest", text);
    expect_refused(install(bundle), 3, "E_SIG");
  }
}

TEST_F(Security, A04_SignatureBitFlippedBadBase64Truncated)
{
  const auto good = good_bundle();
  const auto sig = signature_bytes(good);
  const auto key_id = factory->test_only_key.key_id();
  {
    auto flipped = sig;
    flipped[10] ^= 0x01;
    const auto bundle = copy_bundle(good, "a04-flip");
    write_envelope(bundle, {{key_id, flipped}});
    expect_refused(install(bundle), 3, "E_SIG");
  }
  {
    const auto bundle = copy_bundle(good, "a04-b64");
    write_text(bundle / "manifest.sig",
               "prewarm-signature 1\nsig ed25519 " + key_id + " " + std::string(86, '!') + "==\n");
    expect_refused(install(bundle), 3, "E_SIG_FORMAT");
  }
  {
    const auto bundle = copy_bundle(good, "a04-63");
    write_text(bundle / "manifest.sig",
               "prewarm-signature 1\nsig ed25519 " + key_id + " " + base64_encode(sig.substr(0, 63)) + "\n");
    expect_refused(install(bundle), 3, "E_SIG_FORMAT");
  }
  {
    const auto bundle = copy_bundle(good, "a04-empty");
    write_text(bundle / "manifest.sig", "");
    expect_refused(install(bundle), 3, "E_SIG");
  }
}

TEST_F(Security, A05_A06_UntrustedSignerAndKeyIdNamingATrustedKey)
{
  const auto other = *pack::PrivateKey::generate(); // test_only, never trusted
  const auto bundle = copy_bundle(good_bundle(), "a05");
  resign(bundle, slurp(bundle / "manifest"), &other);
  expect_refused(install(bundle), 3, "E_SIG_UNTRUSTED_KEY");
  // The key id is a hint: name the trusted key, carry the untrusted signature.
  write_envelope(bundle, {{factory->test_only_key.key_id(), signature_bytes(bundle)}});
  expect_refused(install(bundle), 3, "E_SIG");
}

TEST_F(Security, A07_RevokedAndOutOfWindowKeysInThePolicy)
{
  const auto bundle = good_bundle();
  const auto id = factory->test_only_key.key_id();
  expect_refused(install(bundle, "", policy("revoked: [" + id + "]\n", "revoked.yaml")), 3, "E_KEY_REVOKED");
  // A policy with the key revoked needs a second key to be valid (threshold <= keys).
  const auto expired = dir.path() / "expired.yaml";
  write_text(expired, "version: 1\nkeys:\n  - file: test_only.pub\n    not_after: 2020-01-01T00:00:00Z\n");
  expect_refused(install(bundle, "", expired), 3, "E_KEY_EXPIRED");
  const auto future = dir.path() / "future.yaml";
  write_text(future, "version: 1\nkeys:\n  - file: test_only.pub\n    not_before: 2999-01-01T00:00:00Z\n");
  expect_refused(install(bundle, "", future), 3, "E_KEY_EXPIRED");
}

TEST_F(Security, A08_A09_ThresholdCountsUniqueKeys)
{
  const auto second = *pack::PrivateKey::generate();
  const auto second_pub = dir.path() / "second.pub";
  write_text(second_pub, second.public_key().to_pem());
  const auto two_of_two = dir.path() / "two.yaml";
  write_text(two_of_two, "version: 1\nthreshold: 2\nkeys:\n  - file: test_only.pub\n  - file: second.pub\n");
  const auto one_of_two = dir.path() / "one.yaml";
  write_text(one_of_two, "version: 1\nthreshold: 1\nkeys:\n  - file: test_only.pub\n  - file: second.pub\n");

  const auto good = good_bundle();
  const auto sig = signature_bytes(good);
  const auto id = factory->test_only_key.key_id();
  {
    const auto bundle = copy_bundle(good, "a08");
    write_envelope(bundle, {{id, sig}, {id, sig}});
    expect_refused(install(bundle, "", two_of_two), 3, "E_THRESHOLD");
  }
  const auto bundle = copy_bundle(good, "a09");
  write_envelope(bundle, {{id, sig}, {second.key_id(), std::string(64, '\x5a')}});
  expect_refused(install(bundle, "", two_of_two), 3, "E_THRESHOLD");
  const auto accepted = install(bundle, "", one_of_two);
  EXPECT_EQ(accepted.exit_code, 0) << accepted.err;

  // Both keys sign: 2 of 2 accepted.
  const auto both = copy_bundle(good, "a09-both");
  const std::vector<pack::PrivateKey> keys{factory->test_only_key, second};
  write_text(both / "manifest.sig", *pack::sign_manifest(slurp(both / "manifest"), keys));
  EXPECT_EQ(verify(both, "", two_of_two).exit_code, 0);
}

TEST_F(Security, A10_OversizedEnvelopeAndManifestFailFast)
{
  const auto good = good_bundle();
  const auto sig = signature_bytes(good);
  const auto id = factory->test_only_key.key_id();
  const auto timed = [&](const fs::path& bundle, const std::string& code) {
    const auto start = std::chrono::steady_clock::now();
    const auto run = install(bundle);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    expect_refused(run, 3, code);
    EXPECT_LT(elapsed, std::chrono::seconds(2)) << code;
  };
  {
    const auto bundle = copy_bundle(good, "a10-lines");
    std::string envelope = "prewarm-signature 1\n";
    for (int i = 0; i < 10'000; ++i) {
      envelope += "sig ed25519 " + id + " " + base64_encode(sig) + "\n";
    }
    write_text(bundle / "manifest.sig", envelope);
    timed(bundle, "E_LIMIT");
  }
  {
    const auto bundle = copy_bundle(good, "a10-big-envelope");
    write_text(bundle / "manifest.sig", std::string(100u << 20, 'A'));
    timed(bundle, "E_LIMIT");
  }
  {
    const auto bundle = copy_bundle(good, "a10-big-manifest");
    fs::resize_file(bundle / "manifest", std::uint64_t{1} << 30); // sparse 1 GiB
    timed(bundle, "E_LIMIT");
  }
}

TEST_F(Security, A11_TypeConfusion)
{
  const auto good = good_bundle();
  const auto manifest = slurp(good / "manifest");
  const auto id = factory->test_only_key.key_id();
  {
    const auto bundle = copy_bundle(good, "a11-other-type");
    write_envelope(bundle, {{id, *factory->test_only_key.sign(bundle::pae("application/vnd.prewarm.other", manifest))}});
    expect_refused(install(bundle), 3, "E_SIG");
  }
  {
    const auto bundle = copy_bundle(good, "a11-raw");
    write_envelope(bundle, {{id, *factory->test_only_key.sign(manifest)}});
    expect_refused(install(bundle), 3, "E_SIG");
  }
}

TEST_F(Security, A12_Ed25519EdgeSignatures)
{
  const auto good = good_bundle();
  const auto sig = signature_bytes(good);
  const auto id = factory->test_only_key.key_id();
  // S + L (group order, little endian): the same signature, non-canonical S.
  static const unsigned char group_order[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                                0xa2, 0xde, 0xf9, 0xde, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
  auto malleable = sig;
  unsigned carry = 0;
  for (int i = 0; i < 32; ++i) {
    const unsigned sum = static_cast<unsigned char>(malleable[32 + i]) + group_order[i] + carry;
    malleable[32 + i] = static_cast<char>(sum & 0xff);
    carry = sum >> 8;
  }
  std::string small_order_r = sig;
  small_order_r.replace(0, 32, std::string(32, '\0'));
  small_order_r[0] = 1; // R = identity point encoding
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"non-canonical-s", malleable}, {"all-zero", std::string(64, '\0')}, {"small-order-r", small_order_r}};
  for (const auto& [name, bytes] : cases) {
    const auto bundle = copy_bundle(good, "a12-" + name);
    write_envelope(bundle, {{id, bytes}});
    SCOPED_TRACE(name);
    expect_refused(install(bundle), 3, "E_SIG");
  }
  // A small-order public key in the policy: the all-zero signature must not
  // verify under it either.
  const auto weak = dir.path() / "weak.pub";
  std::string der = std::string("\x30\x2a\x30\x05\x06\x03\x2b\x65\x70\x03\x21\x00", 12);
  std::string point(32, '\0');
  point[0] = 1; // identity
  der += point;
  write_text(weak, "-----BEGIN PUBLIC KEY-----\n" + base64_encode(der) + "\n-----END PUBLIC KEY-----\n");
  const auto bundle = copy_bundle(good, "a12-weak-key");
  auto weak_key = bundle::PublicKey::from_der(der);
  if (weak_key) {
    write_envelope(bundle, {{weak_key->key_id(), std::string(64, '\0')}});
    const auto run = install(bundle, "", weak);
    EXPECT_NE(run.exit_code, 0) << run.err;
    expect_untouched();
  }
}

TEST_F(Security, A13_NonCanonicalManifestsSignedValidly)
{
  const auto good = good_bundle();
  const auto text = slurp(good / "manifest");
  const auto channel_line = std::string("channel default\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"crlf", replace_once(text, "channel default\n", "channel default\r\n")},
    {"trailing-space", replace_once(text, "channel default\n", "channel default \n")},
    {"non-ascii", replace_once(text, "channel default\n", "channel d\xc3\xa9" "fault\n")},
    {"duplicate-key", replace_once(text, "channel default\n", "channel default\nchannel default\n")},
    {"unknown-key", replace_once(text, "channel default\n", "channel default\ncolor blue\n")},
    {"reordered", [&] {
       // channel after serial
       auto t = replace_once(text, "channel default\n", "");
       return replace_once(t, "serial 2\n", "serial 2\n" + channel_line);
     }()},
    {"reordered-2", [&] {
       const auto serial_at = text.find("serial ");
       const auto serial_end = text.find('\n', serial_at) + 1;
       auto t = text;
       const auto serial = t.substr(serial_at, serial_end - serial_at);
       t.erase(serial_at, serial.size());
       return replace_once(t, "prewarm-bundle 1\n", "prewarm-bundle 1\n" + serial);
     }()},
    {"leading-zero", replace_once(text, "serial 2\n", "serial 02\n")},
    {"uppercase-hex", [&] {
       const auto at = text.find("payload ") + 8;
       auto t = text;
       for (std::size_t i = at; i < at + 64; ++i) {
         t[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[i])));
       }
       return t;
     }()},
    {"no-final-newline", text.substr(0, text.size() - 1)},
    {"nul-byte", replace_once(text, "channel default\n", std::string("channel def\0ault\n", 18))},
    {"wrong-version", replace_once(text, "prewarm-bundle 1\n", "prewarm-bundle 2\n")},
  };
  for (const auto& [name, bytes] : cases) {
    SCOPED_TRACE(name);
    const auto bundle = copy_bundle(good, "a13-" + name);
    resign(bundle, bytes);
    expect_refused(install(bundle), 3, "E_MANIFEST_FORMAT");
  }
}

// ---------------------------------------------------------------- B: freshness

TEST_F(Security, B14_ExpiryEnforcedOrWarnedByThePolicy)
{
  const auto old = factory->write("expired", 2, {{"cpu", newer_files(), test::requires_cpu()}}, nullptr, "default",
                                  now_seconds() - std::chrono::hours(48), now_seconds() - std::chrono::hours(1));
  expect_refused(install(old, "", policy("expiry: enforce\n")), 3, "E_EXPIRED");
  const auto warned = install(old, "", policy("expiry: warn\n", "warn.yaml"));
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_NE(warned.err.find("E_EXPIRED"), std::string::npos) << warned.err;
  // The skew allowance comes from the policy: 2 h covers an expiry 1 h ago.
  const auto skew = install(old, "", policy("max_clock_skew: 2h\n", "skew.yaml"));
  EXPECT_EQ(skew.exit_code, 0) << skew.err;
}

TEST_F(Security, B15_IssuedInTheFuture)
{
  const auto bundle = factory->write("future", 2, {{"cpu", newer_files(), test::requires_cpu()}}, nullptr, "default",
                                     now_seconds() + std::chrono::hours(2), now_seconds() + std::chrono::hours(48));
  expect_refused(install(bundle), 3, "E_CLOCK");
  expect_refused(install(bundle, "", policy("max_clock_skew: 1h\n")), 3, "E_CLOCK");
}

TEST_F(Security, B16_MinSerialInThePolicy)
{
  const auto bundle = good_bundle(5);
  expect_refused(install(bundle, "", policy("channels:\n  default:\n    min_serial: 6\n")), 3, "E_ROLLBACK");
  const auto run = install(bundle, "", policy("channels:\n  default:\n    min_serial: 5\n", "ok.yaml"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST_F(Security, B16_HighWaterSurvivesAPolicyWithoutMinSerial)
{
  ASSERT_EQ(install(good_bundle(9)).exit_code, 0);
  root_hash_before = test::tree_hash(root);
  expect_refused(install(good_bundle(8)), 3, "E_ROLLBACK");
  // The baseline (serial 1) again: older still.
  expect_refused(install(baseline_bundle), 3, "E_ROLLBACK");
}

TEST_F(Security, B17_SameSerialOtherContent)
{
  ASSERT_EQ(install(good_bundle(3)).exit_code, 0);
  root_hash_before = test::tree_hash(root);
  const auto twin = factory->write("twin", 3, {{"cpu", {{"pocl/aa/kernel.bin", "evil twin"}}, test::requires_cpu()}});
  expect_refused(install(twin), 3, "E_ROLLBACK_EQUIVOCATION");
}

TEST_F(Security, B18_PinnedManifestRefusesEvenANewerBundle)
{
  const auto pinned = good_bundle(2);
  const auto digest = sha256_hex(slurp(pinned / "manifest"));
  const auto pin = policy("channels:\n  default:\n    expect_manifest_sha256: " + digest + "\n");
  const auto newer = good_bundle(3);
  const auto refused = install(newer, "", pin);
  expect_refused(refused, 3, "E_PIN");
  EXPECT_NE(refused.err.find(digest), std::string::npos) << "message names the expected digest";
  const auto ok = install(pinned, "", pin);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(Security, B19_ChannelNotInThePolicy)
{
  const auto bundle = good_bundle(2, "prod/a");
  const auto run = install(bundle, "", policy("channels:\n  prod/b:\n"));
  expect_refused(run, 3, "E_CHANNEL");
  EXPECT_NE(run.err.find("prod/a"), std::string::npos);
  EXPECT_NE(run.err.find("prod/b"), std::string::npos);
}

TEST_F(Security, B20_PayloadFromAnotherSignedBundle)
{
  const auto a = good_bundle(2);
  const auto b = factory->write("other", 2, {{"cpu", {{"pocl/zz/x.bin", "other payload"}}, test::requires_cpu()}});
  fs::copy_file(b / "slices/cpu.tar.zst", a / "slices/cpu.tar.zst", fs::copy_options::overwrite_existing);
  expect_refused(install(a), 3, "E_PAYLOAD");
}

// ---------------------------------------------------------------- C: targets

TEST_F(Security, C21_WrongGpuIsASkipNamingExpectedAndActual)
{
  const auto bundle = factory->write("gpu", 2, {{"h200", newer_files(), {{"vendor", "==", "nvidia"}}}});
  const auto run = install(bundle);
  expect_refused(run, 4, "E_TARGET_MISMATCH");
  EXPECT_NE(run.err.find("nvidia"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("cpu"), std::string::npos) << run.err;
  // --on-failure warn: exit 0, still nothing written.
  const auto warned = install(bundle, "--on-failure warn");
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  expect_untouched();
}

TEST_F(Security, C23_UnknownRequirementKeyIsCritical)
{
  const auto bundle = good_bundle();
  auto text = slurp(bundle / "manifest");
  text = replace_once(text, "require vendor == cpu\n", "require quantum.flux >= 3\nrequire vendor == cpu\n");
  resign(bundle, text);
  expect_refused(install(bundle), 3, "E_UNKNOWN_REQUIREMENT");
}

// ---------------------------------------------------------------- D: archives

namespace {

struct EvilArchive
{
  std::string name;
  std::string tar;         // uncompressed
  std::vector<std::string> dirs;
  std::vector<bundle::FileEntry> files;
  std::string code;        // expected error code (substring)
  std::vector<bundle::LinkEntry> links = {};
};

std::vector<EvilArchive>
evil_archives()
{
  using test::RawTar;
  using test::file_entry;
  const std::string k = "kernel";
  const auto dirs = std::vector<std::string>{"pocl", "pocl/aa"};
  const auto listed = std::vector<bundle::FileEntry>{file_entry("pocl/aa/k.bin", k)};
  const auto base = [] { return RawTar().dir("pocl").dir("pocl/aa"); };
  std::vector<EvilArchive> out;
  const auto add = [&](std::string name, std::string tar, std::string code) {
    out.push_back({std::move(name), std::move(tar), dirs, listed, std::move(code)});
  };
  for (const std::string evil : {"../evil", "pocl/aa/../../evil", "/etc/passwd", "//x", "./", "pocl//aa/k.bin",
                                 "pocl/./aa/k.bin", "pocl/aa/k.bin/", "pocl/aa/../", "", "pocl\\aa\\k.bin"}) {
    add("path " + evil, base().file(evil, k).file("pocl/aa/k.bin", k).finish(), "E_");
  }
  // A link entry the signed manifest does not list.
  add("symlink to /etc", base().entry("pocl/aa/localetc", '2', {}, -1, "/etc").file("pocl/aa/k.bin", k).finish(),
      "E_ENTRY_NOT_IN_MANIFEST");
  add("symlink named ..", base().entry("pocl/..", '2', {}, -1, "/").file("pocl/aa/k.bin", k).finish(), "E_");
  add("symlink up and out", base().entry("pocl/aa/up", '2', {}, -1, "../../../outside").file("pocl/aa/k.bin", k).finish(),
      "E_ENTRY_NOT_IN_MANIFEST");
  // Links the signed manifest lists: only one that leads to a file of its own
  // cache is accepted, and only with the signed target.
  const auto linked = [&](std::string name, std::string tar, bundle::LinkEntry link, std::string code) {
    out.push_back({std::move(name), std::move(tar), dirs, listed, std::move(code), {std::move(link)}});
  };
  linked("signed link, other target in the payload",
         base().file("pocl/aa/k.bin", k).entry("pocl/aa/l", '2', {}, 0, "../../../outside").finish(), {"pocl/aa/l", "k.bin"},
         "E_LINK_TARGET");
  linked("signed link, absolute target", base().file("pocl/aa/k.bin", k).entry("pocl/aa/l", '2', {}, 0, "/etc/passwd").finish(),
         {"pocl/aa/l", "/etc/passwd"}, "E_PATH");
  linked("signed link climbing out of its cache",
         base().file("pocl/aa/k.bin", k).entry("pocl/aa/l", '2', {}, 0, "../../outside").finish(), {"pocl/aa/l", "../../outside"},
         "E_PATH");
  linked("signed link to a directory", base().file("pocl/aa/k.bin", k).entry("pocl/aa/l", '2', {}, 0, "..").finish(),
         {"pocl/aa/l", ".."}, "E_PATH");
  linked("signed link to nothing", base().file("pocl/aa/k.bin", k).entry("pocl/aa/l", '2', {}, 0, "gone").finish(),
         {"pocl/aa/l", "gone"}, "E_PATH");
  linked("signed link, a file in the payload", base().file("pocl/aa/k.bin", k).file("pocl/aa/l", k).finish(),
         {"pocl/aa/l", "k.bin"}, "E_TYPE");
  linked("signed link to a file of the cache", base().file("pocl/aa/k.bin", k).entry("pocl/aa/l", '2', {}, 0, "k.bin").finish(),
         {"pocl/aa/l", "k.bin"}, "OK");
  // Names beyond [A-Za-z0-9._+-]: the payload must spell them as the
  // manifest does (percent-encoded), one spelling per name.
  out.push_back({"name with a space, raw in the payload", base().file("pocl/aa/k.bin", k).file("pocl/aa/a b", k).finish(), dirs,
                 {file_entry("pocl/aa/a b", k), file_entry("pocl/aa/k.bin", k)}, "E_PATH"});
  out.push_back({"name other than signed", base().file("pocl/aa/a%20c", k).file("pocl/aa/k.bin", k).finish(), dirs,
                 {file_entry("pocl/aa/a b", k), file_entry("pocl/aa/k.bin", k)}, "E_"});
  out.push_back({"name with a space, encoded", base().file("pocl/aa/a%20b", k).file("pocl/aa/k.bin", k).finish(), dirs,
                 {file_entry("pocl/aa/a b", k), file_entry("pocl/aa/k.bin", k)}, "OK"});
  add("hardlink /etc/passwd", base().entry("pocl/aa/k.bin", '1', {}, 0, "/etc/passwd").finish(), "E_TYPE");
  add("hardlink to earlier file",
      base().file("pocl/aa/k.bin", k).entry("pocl/aa/k2.bin", '1', {}, 0, "pocl/aa/k.bin").finish(), "E_TYPE");
  add("char device", base().entry("pocl/aa/null", '3').file("pocl/aa/k.bin", k).finish(), "E_TYPE");
  add("block device", base().entry("pocl/aa/sda", '4').file("pocl/aa/k.bin", k).finish(), "E_TYPE");
  add("fifo", base().entry("pocl/aa/fifo", '6').file("pocl/aa/k.bin", k).finish(), "E_TYPE");
  add("volume header", RawTar().entry("VOLUME", 'V').dir("pocl").dir("pocl/aa").file("pocl/aa/k.bin", k).finish(),
      "E_");
  add("gnu sparse", base().entry("pocl/aa/k.bin", 'S', k).finish(), "E_");
  add("global pax", RawTar().pax('g', {{"path", "pocl/aa/evil"}}).dir("pocl").dir("pocl/aa").file("pocl/aa/k.bin", k).finish(),
      "E_");
  add("pax sparse 1.0", base().pax('x', {{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"}, {"GNU.sparse.name", "pocl/aa/k.bin"}})
                          .file("pocl/aa/k.bin", k).finish(), "E_");
  add("duplicate entry", base().file("pocl/aa/k.bin", k).file("pocl/aa/k.bin", "evil").finish(), "E_DUPLICATE");
  add("smuggled entry", base().file("pocl/aa/k.bin", k).file("pocl/aa/smuggled", "x").finish(),
      "E_ENTRY_NOT_IN_MANIFEST");
  add("missing entry", base().finish(), "E_ENTRY_MISSING");
  add("pax path overrides name", base().pax('x', {{"path", "pocl/aa/other.bin"}}).file("pocl/aa/k.bin", k).finish(),
      "E_");
  add("pax path with NUL", base().pax('x', {{"path", std::string("pocl/aa/k.bin\0x", 15)}}).file("pocl/aa/k.bin", k).finish(),
      "E_");
  add("pax size hides an inner tar",
      base().pax('x', {{"size", "2048"}}).entry("pocl/aa/k.bin", '0', RawTar().file("pocl/aa/inner", "x").finish().substr(0, 2048), 0).finish(),
      "E_");
  add("invalid pax size", base().pax('x', {{"size", "-1"}}).file("pocl/aa/k.bin", k).finish(), "E_");
  add("size differs from manifest", base().file("pocl/aa/k.bin", k + "!").finish(), "E_ENTRY_SIZE");
  add("same size other digest", base().file("pocl/aa/k.bin", "KERNEL").finish(), "E_ENTRY_DIGEST");
  {
    auto truncated = base().entry("pocl/aa/k.bin", '0', k, 4096).finish();
    truncated.resize(512 * 4 + 512);
    add("truncated data", truncated, "E_");
  }
  add("trailing garbage", base().file("pocl/aa/k.bin", k).finish(std::string(512, 'G')), "E_");
  add("concatenated tar", base().file("pocl/aa/k.bin", k).finish(RawTar().file("pocl/aa/second", "x").finish()), "E_");
  add("setuid mode in archive", base().file("pocl/aa/k.bin", k, 04755).finish(), "OK");
  add("world-writable mode", base().file("pocl/aa/k.bin", k, 0666).finish(), "OK");
  add("sticky dir", RawTar().entry("pocl/", '5', {}, -1, {}, 01777).dir("pocl/aa").file("pocl/aa/k.bin", k).finish(),
      "OK");
  {
    std::string deep = "pocl";
    for (int i = 0; i < 40; ++i) {
      deep += "/d";
    }
    add("depth 40", base().file(deep + "/k.bin", k).file("pocl/aa/k.bin", k).finish(), "E_");
    add("component 256", base().file("pocl/aa/" + std::string(256, 'n'), k).file("pocl/aa/k.bin", k).finish(), "E_");
    add("path 4097", base().pax('x', {{"path", "pocl/" + std::string(4092, 'p')}}).file("pocl/x", k).file("pocl/aa/k.bin", k).finish(),
        "E_");
  }
  return out;
}

} // namespace

TEST_F(Security, D_EvilArchivesSignedValidly)
{
  evil_archive_cases();
}

// Shared with F54 (the same cases with openat2 blocked by seccomp).
void
Security::evil_archive_cases()
{
  const auto round = std::to_string(bundle_counter++); // F54 runs the cases twice
  const auto good = factory->write("evil-base-" + round, 2, {{"cpu", {{"pocl/aa/k.bin", "kernel"}}, test::requires_cpu()}});
  int index = 0;
  for (const auto& evil : evil_archives()) {
    SCOPED_TRACE(evil.name);
    const auto bundle = copy_bundle(good, "d-" + round + "-" + std::to_string(index++));
    const auto payload = test::zstd_compress(evil.tar);
    replace_payload(bundle, "cpu", payload, [&](bundle::Slice& s) {
      s.directories = evil.dirs;
      s.files = evil.files;
      s.links = evil.links;
      s.uncompressed_size = 0;
      for (const auto& f : s.files) {
        s.uncompressed_size += f.size;
      }
      s.entry_count = s.directories.size() + s.files.size() + s.links.size();
    });
    const auto run = install(bundle);
    if (evil.code == "OK") {
      // Modes come from the manifest: never an s-bit, never world-writable.
      EXPECT_EQ(run.exit_code, 0) << run.err;
      struct stat st{};
      ASSERT_EQ(::lstat((root / "pocl/aa/k.bin").c_str(), &st), 0);
      EXPECT_EQ(st.st_mode & 07777, 0644u);
      ASSERT_EQ(::lstat((test::current_version(root) / "pocl").c_str(), &st), 0); // ROOT/pocl is a link to it
      EXPECT_EQ(st.st_mode & 07777, 0755u);
      for (const auto& link : evil.links) {
        EXPECT_EQ(fs::read_symlink(root / link.path), link.target);
      }
      EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
      // Back to the baseline for the next case (new root, same baseline).
      fs::remove_all(root);
      ASSERT_EQ(install(baseline_bundle).exit_code, 0);
      root_hash_before = test::tree_hash(root);
      continue;
    }
    expect_refused(run, 3, evil.code);
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir.path() / "evil")));
    EXPECT_FALSE(fs::exists(fs::symlink_status(root / "evil")));
  }
}

TEST_F(Security, D28_D29_SymlinkPlantedInTheLiveCache)
{
  // An application (or an earlier attacker) left pocl/cc -> outside/victim
  // and pocl/aa/sub -> outside. The new bundle has files under both names.
  fs::create_symlink(outside / "victim", root / "pocl/cc");
  ::chmod((outside / "victim").c_str(), 0700);
  root_hash_before = test::tree_hash(root);
  outside_hash_before = test::tree_hash(outside);
  const auto bundle = good_bundle(); // holds pocl/cc/third.bin
  const auto run = install(bundle);
  // Either outcome is acceptable, as long as nothing goes through the link.
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 3) << run.err;
  EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
  struct stat st{};
  ASSERT_EQ(::stat((outside / "victim").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_FALSE(fs::exists(outside / "victim/third.bin"));
}

TEST_F(Security, D56_RootOrKindDirectoryIsASymlink)
{
  const auto bundle = good_bundle();
  {
    // ROOT/pocl -> outside. The installer writes only into a new version
    // (runtime/install/install_layout.hpp) and replaces the link itself,
    // never following it: installed, nothing written outside.
    fs::remove(root / "pocl");
    fs::create_symlink(outside, root / "pocl");
    const auto run = install(bundle);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
    EXPECT_EQ(fs::read_symlink(root / "pocl").parent_path().parent_path(), fs::path(".prewarm/versions"));
  }
  {
    // ROOT itself is a link: --root names the link.
    const auto link = dir.path() / "root-link";
    fs::create_symlink(outside, link);
    const auto run = run_shell(work, host_env + " " PREWARM_RUNTIME_BINARY " install " + bundle.string() +
                                       " --trust " + pub.string() + " --root " + link.string());
    EXPECT_NE(run.exit_code, 0) << run.out;
    EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
  }
}

// ---------------------------------------------------------------- E: resources

TEST_F(Security, E40_BombRefusedByPolicyBeforeDecompressing)
{
  // 80 MiB of zeros compress to a few KiB: honestly declared, over the
  // policy's limits (the expansion ratio applies above 64 MiB: small caches
  // of zeros are legitimately very compressible).
  const auto bundle = factory->write("bomb", 2, {{"cpu", {{"pocl/aa/zeros.bin", std::string(80u << 20, '\0')}},
                                                  test::requires_cpu()}});
  expect_refused(install(bundle, "", policy("limits:\n  max_uncompressed_bytes: 1048576\n")), 3, "E_LIMIT");
  expect_refused(install(bundle, "", policy("limits:\n  max_file_bytes: 1048576\n", "f.yaml")), 3, "E_LIMIT");
  expect_refused(install(bundle, "", policy("limits:\n  max_expansion_ratio: 10\n", "r.yaml")), 3, "E_LIMIT");
  expect_refused(install(bundle, "", policy("limits:\n  max_payload_bytes: 100\n", "p.yaml")), 3, "E_LIMIT");
}

TEST_F(Security, E40_LyingManifestStopsAtTheDeclaredSize)
{
  // The archive holds 8 MiB for a file the manifest says is 6 bytes.
  const auto good = factory->write("liar", 2, {{"cpu", {{"pocl/aa/k.bin", "kernel"}}, test::requires_cpu()}});
  const auto tar = test::RawTar().dir("pocl").dir("pocl/aa").file("pocl/aa/k.bin", std::string(8u << 20, 'z')).finish();
  replace_payload(good, "cpu", test::zstd_compress(tar));
  // The stream counter stops at the declared size + header allowance.
  expect_refused(install(good), 3, "E_LIMIT");
}

TEST_F(Security, E42_EntryCountAndPathLimitsFromThePolicy)
{
  Files many;
  for (int i = 0; i < 50; ++i) {
    many["pocl/aa/f" + std::to_string(i)] = std::to_string(i);
  }
  const auto bundle = factory->write("many", 2, {{"cpu", many, test::requires_cpu()}});
  expect_refused(install(bundle, "", policy("limits:\n  max_entries: 20\n")), 3, "E_LIMIT");
  expect_refused(install(bundle, "", policy("limits:\n  max_path_length: 8\n", "l.yaml")), 3, "E_LIMIT");
  expect_refused(install(bundle, "", policy("limits:\n  max_depth: 1\n", "d.yaml")), 3, "E_LIMIT");
  const auto ok = install(bundle, "", policy("limits:\n  max_entries: 60\n", "ok.yaml"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(Security, PolicyKindsRestrictWhatABundleMayWrite)
{
  const auto bundle = good_bundle();
  const auto run = install(bundle, "", policy("install:\n  kinds: [neo]\n"));
  expect_refused(run, 3, "E_POLICY_KIND");
  EXPECT_NE(run.err.find("pocl"), std::string::npos);
  const auto ok = install(bundle, "", policy("install:\n  kinds: [neo, pocl]\n", "ok.yaml"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(Security, PolicyInstallRootIsTheDefaultRoot)
{
  const auto other_root = dir.path() / "policy-root";
  const auto bundle = good_bundle();
  const auto p = policy("install:\n  root: " + other_root.string() + "\n");
  const auto run = run_shell(work, host_env + " " PREWARM_RUNTIME_BINARY " install " + bundle.string() + " --trust " +
                                     p.string());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(fs::exists(other_root / "pocl/aa/kernel.bin"));
  expect_untouched();
}

TEST_F(Security, BadPolicyIsAConfigErrorAndWritesNothing)
{
  const auto bundle = good_bundle();
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"typo", "channels:\n  default:\n    min_serail: 9\n"},
    {"unknown top-level", "trust_everything: true\n"},
    {"threshold over keys", "threshold: 2\n"},
    {"threshold zero", "threshold: 0\n"},
    {"bad expiry", "expiry: sometimes\n"},
    {"negative limit", "limits:\n  max_entries: -1\n"},
    {"zero limit", "limits:\n  max_entries: 0\n"},
    {"bad pin", "channels:\n  default:\n    expect_manifest_sha256: abc\n"},
    {"bad revoked", "revoked: [nothex]\n"},
    {"unknown kind", "install:\n  kinds: [cuda-magic]\n"},
    {"relative root", "install:\n  root: var/cache\n"},
    {"yaml syntax", "channels: [\n"},
  };
  int i = 0;
  for (const auto& [name, extra] : cases) {
    SCOPED_TRACE(name);
    const auto run = install(bundle, "", policy(extra, "bad" + std::to_string(i++) + ".yaml"));
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(".yaml"), std::string::npos) << "names the policy file: " << run.err;
    expect_untouched();
  }
  // A key id that does not match the key, and a key file that is not a key.
  write_text(dir.path() / "wrong-id.yaml", "version: 1\nkeys:\n  - file: test_only.pub\n    key_id: " +
                                               std::string(64, 'a') + "\n");
  EXPECT_EQ(install(bundle, "", dir.path() / "wrong-id.yaml").exit_code, 2);
  write_text(dir.path() / "notakey.pub", "hello");
  write_text(dir.path() / "notakey.yaml", "version: 1\nkeys:\n  - file: notakey.pub\n");
  EXPECT_EQ(install(bundle, "", dir.path() / "notakey.yaml").exit_code, 2);
  expect_untouched();
}
