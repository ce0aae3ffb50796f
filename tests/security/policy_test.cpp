// SPDX-License-Identifier: Apache-2.0
// bundle/trust_policy: the YAML loader and the manifest rules, in-process.
#include "bundle/trust_policy.hpp"

#include "base/digest.hpp"
#include "base/files.hpp"
#include "pack/key_pair.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

using namespace prewarm;
using namespace prewarm::bundle;

namespace {

const pack::PrivateKey&
test_only_key()
{
  static const pack::PrivateKey key = *pack::PrivateKey::generate();
  return key;
}

std::string
indented_pem()
{
  std::string out;
  const auto pem = test_only_key().public_key().to_pem();
  std::size_t start = 0;
  while (start < pem.size()) {
    const auto end = pem.find('\n', start);
    out += "      " + pem.substr(start, end - start) + "\n";
    start = end == std::string::npos ? pem.size() : end + 1;
  }
  return out;
}

BundleManifest
manifest(std::string channel, std::uint64_t serial)
{
  BundleManifest m;
  m.channel = std::move(channel);
  m.serial = serial;
  Slice s;
  s.id = "cpu";
  s.payload_size = 1000;
  s.uncompressed_size = 5000;
  s.directories = {"pocl", "pocl/aa"};
  s.files = {{"pocl/aa/k.bin", sha256_hex("k"), 5000, 0644}};
  s.entry_count = 3;
  m.slices.push_back(s);
  return m;
}

} // namespace

TEST(TrustPolicy, FullPolicyParses)
{
  const auto id = test_only_key().key_id();
  const std::string yaml = "version: 1\n"
                           "keys:\n"
                           "  - pem: |\n" +
                           indented_pem() +
                           "    key_id: " + id + "\n"
                           "    not_before: 2026-01-01T00:00:00Z\n"
                           "    not_after: 2027-01-01T00:00:00Z\n"
                           "revoked: [" + std::string(64, 'e') + "]\n"
                           "threshold: 1\n"
                           "expiry: warn\n"
                           "max_clock_skew: 10m\n"
                           "channels:\n"
                           "  prod/llm:\n"
                           "    min_serial: 7\n"
                           "  prod/cnn:\n"
                           "    expect_manifest_sha256: " + std::string(64, 'a') + "\n"
                           "  dev:\n"
                           "limits:\n"
                           "  max_entries: 99\n"
                           "  max_file_bytes: 1234\n"
                           "install:\n"
                           "  root: /var/cache/prewarm\n"
                           "  kinds: [pocl, neo]\n";
  const auto policy = parse_trust_policy(yaml, ".", "test.yaml");
  ASSERT_TRUE(policy) << policy.error().message();
  ASSERT_EQ(policy->trust.keys.size(), 1u);
  EXPECT_EQ(policy->trust.keys[0].key.key_id(), id);
  EXPECT_TRUE(policy->trust.keys[0].not_before && policy->trust.keys[0].not_after);
  EXPECT_EQ(policy->trust.revoked_key_ids, std::vector<std::string>{std::string(64, 'e')});
  EXPECT_EQ(policy->expiry, PolicyExpiry::warn);
  EXPECT_EQ(policy->max_clock_skew, std::chrono::minutes(10));
  ASSERT_EQ(policy->manifest.channels.size(), 3u);
  EXPECT_EQ(policy->manifest.channels.at("prod/llm").min_serial, 7u);
  EXPECT_EQ(policy->manifest.channels.at("prod/cnn").expect_manifest_sha256, std::string(64, 'a'));
  EXPECT_FALSE(policy->manifest.channels.at("dev").min_serial);
  EXPECT_EQ(policy->manifest.limits.max_entries, 99u);
  EXPECT_EQ(policy->manifest.limits.max_file_bytes, 1234u);
  EXPECT_EQ(policy->manifest.limits.max_depth, ExtractLimits{}.max_depth);
  EXPECT_EQ(policy->install_root, std::filesystem::path("/var/cache/prewarm"));
  EXPECT_EQ(policy->manifest.allowed_kinds, (std::set<std::string>{"neo", "pocl"}));
}

TEST(TrustPolicy, ErrorsNameLineAndField)
{
  const auto bad = parse_trust_policy("version: 1\nkeys:\n  - pem: x\n    colour: red\n", ".", "p.yaml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().category(), Errc::usage);
  EXPECT_NE(bad.error().message().find("p.yaml:4"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("keys[0].colour"), std::string::npos) << bad.error().message();
  for (const std::string& text : std::vector<std::string>{"", "[]", "version: 2\nkeys: []\n", "version: 1\n", "version: 1\nkeys: []\n",
                                 std::string("version: 1\0keys:", 16), "version: 1\nkeys:\n  - {}\n",
                                 "version: 1\nkeys:\n  - pem: a\n    file: b\n"}) {
    SCOPED_TRACE(text);
    const auto r = parse_trust_policy(text, ".", "p.yaml");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().category(), Errc::usage);
  }
}

// yaml-cpp registers an anchor before reading its node: `&a [*a]` contains
// itself. Deep nesting and aliases of aliases are as hostile. Each is refused
// with a usage error, fast, and never walked to a stack overflow.
TEST(TrustPolicy, SelfReferenceDepthAndAliasBombAreRefused)
{
  std::string deep = "version: 1\nkeys: ";
  deep += std::string(200, '[') + std::string(200, ']') + "\n";
  std::string bomb = "version: 1\na: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'h'; ++level) {
    bomb += fmt::format("{}: &{} [", level, level);
    for (int i = 0; i < 10; ++i) {
      bomb += fmt::format("{}*{}", i == 0 ? "" : ", ", static_cast<char>(level - 1));
    }
    bomb += "]\n";
  }
  const std::vector<std::pair<std::string, std::string>> cases{
    {"version: 1\nkeys: &a [*a]\n", "nested deeper"},
    {"version: 1\nkeys: &a {k: *a}\n", "nested deeper"},
    {deep, "nested deeper"},
    {bomb, "nodes once aliases are expanded"},
  };
  for (const auto& [text, why] : cases) {
    SCOPED_TRACE(text.substr(0, 80));
    const auto r = parse_trust_policy(text, ".", "p.yaml");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().category(), Errc::usage);
    EXPECT_NE(r.error().message().find(why), std::string::npos) << r.error().message();
  }
}

TEST(TrustPolicy, PubFileIsAOneKeyPolicy)
{
  auto dir = *TempDir::create("prewarm-policy-test-");
  const auto pub = dir.path() / "test_only.pub";
  std::ofstream(pub) << test_only_key().public_key().to_pem();
  const auto policy = load_trust_file(pub);
  ASSERT_TRUE(policy) << policy.error().message();
  EXPECT_EQ(policy->trust.keys.size(), 1u);
  EXPECT_TRUE(policy->manifest.channels.empty());
  EXPECT_TRUE(check_manifest_policy(policy->manifest, sha256_hex("m"), manifest("anything", 1)));
  // The same key through a policy that names the file relative to itself.
  std::ofstream(dir.path() / "p.yml") << "version: 1\nkeys:\n  - file: test_only.pub\n";
  const auto yml = load_trust_file(dir.path() / "p.yml");
  ASSERT_TRUE(yml) << yml.error().message();
  EXPECT_EQ(yml->trust.keys[0].key.key_id(), test_only_key().key_id());
}

TEST(TrustPolicy, ManifestRules)
{
  ManifestPolicy policy;
  policy.channels["prod/llm"].min_serial = 7;
  policy.channels["prod/cnn"].expect_manifest_sha256 = sha256_hex("pinned");
  const auto code = [&](const BundleManifest& m, std::string_view digest = "x") {
    const auto r = check_manifest_policy(policy, digest, m);
    return r ? std::string("OK") : r.error().code();
  };
  EXPECT_EQ(code(manifest("prod/llm", 7)), "OK");
  EXPECT_EQ(code(manifest("prod/llm", 6)), "E_ROLLBACK");
  EXPECT_EQ(code(manifest("prod/other", 100)), "E_CHANNEL");
  EXPECT_EQ(code(manifest("prod/cnn", 1), sha256_hex("pinned")), "OK");
  EXPECT_EQ(code(manifest("prod/cnn", 99), sha256_hex("newer")), "E_PIN");
  policy.limits.max_file_bytes = 4999;
  EXPECT_EQ(code(manifest("prod/llm", 8)), "E_LIMIT");
  policy.limits = {};
  policy.limits.max_entries = 2;
  EXPECT_EQ(code(manifest("prod/llm", 8)), "E_LIMIT");
  policy.limits = {};
  policy.allowed_kinds = std::set<std::string>{"neo"};
  EXPECT_EQ(code(manifest("prod/llm", 8)), "E_POLICY_KIND");
  policy.allowed_kinds->insert("pocl");
  EXPECT_EQ(code(manifest("prod/llm", 8)), "OK");
}

TEST(TrustPolicy, InstallOwnerIsTwoNumbers)
{
  auto dir = *TempDir::create("prewarm-policy-test-");
  std::ofstream(dir.path() / "k.pub") << test_only_key().public_key().to_pem();
  const std::string head = "version: 1\nkeys:\n  - file: k.pub\ninstall:\n  owner: ";
  const auto good = parse_trust_policy(head + "\"1000:1001\"\n", dir.path(), "p.yaml");
  ASSERT_TRUE(good) << good.error().message();
  ASSERT_TRUE(good->manifest.install_owner);
  EXPECT_EQ(good->manifest.install_owner->uid, 1000u);
  EXPECT_EQ(good->manifest.install_owner->gid, 1001u);
  const auto none = parse_trust_policy("version: 1\nkeys:\n  - file: k.pub\n", dir.path(), "p.yaml");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->manifest.install_owner);
  // Names, one number, signs, the chown(2) "unchanged" value, garbage: a config error naming the field.
  for (const std::string value : {"root:root", "1000", "-1:0", "4294967295:0", "0:4294967295", "1:2:3", "\"\"", "\"1000: 1000\"", "[1, 2]"}) {
    SCOPED_TRACE(value);
    const auto bad = parse_trust_policy(head + value + "\n", dir.path(), "p.yaml");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().category(), Errc::usage);
    EXPECT_NE(bad.error().message().find("install.owner"), std::string::npos) << bad.error().message();
  }
}
