// SPDX-License-Identifier: Apache-2.0
#include "registry/auth_challenge.hpp"
#include "registry/image_reference.hpp"
#include "registry/oci_document.hpp"
#include "registry/registry_client.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace prewarm::registry {
namespace {

const std::string k_digest = "sha256:" + std::string(64, 'a');

TEST(ImageReference, RegistryRepositoryTagDigest)
{
  const auto ref = parse_image_reference("oci://127.0.0.1:5000/team/bundles:v1@" + k_digest);
  ASSERT_TRUE(ref) << ref.error().message();
  EXPECT_EQ(ref->registry, "127.0.0.1:5000");
  EXPECT_EQ(ref->repository, "team/bundles");
  EXPECT_EQ(ref->tag, "v1");
  EXPECT_EQ(ref->digest, k_digest);
  EXPECT_EQ(ref->with_digest(k_digest).to_string(), "127.0.0.1:5000/team/bundles@" + k_digest);
}

TEST(ImageReference, RejectsWhatIsNotAReference)
{
  for (const std::string& bad : std::vector<std::string>{"bundles", "reg/UPPER", "reg/repo@sha256:abc", "reg/repo:bad tag", "/repo",
                                "reg/repo@md5:" + std::string(32, 'a')}) {
    const auto ref = parse_image_reference(bad);
    EXPECT_FALSE(ref) << bad;
    if (!ref) {
      EXPECT_EQ(ref.error().category(), Errc::usage);
    }
  }
}

TEST(ImageReference, RuntimeNeedsADigest)
{
  const auto ref = parse_pinned_reference("reg.example/team/app:v1");
  ASSERT_FALSE(ref);
  EXPECT_EQ(ref.error().code(), "E_UNPINNED");
  EXPECT_TRUE(looks_like_registry_reference("reg/app@" + k_digest));
  EXPECT_TRUE(looks_like_registry_reference("oci://reg/app:v1"));
  EXPECT_FALSE(looks_like_registry_reference("out/bundle"));
}

// A tag or another digest algorithm is a reference refused by name, not a
// directory that is missing; relative directories stay directories.
TEST(ImageReference, TagsAndOtherDigestsAreReferences)
{
  EXPECT_TRUE(looks_like_registry_reference("127.0.0.1:5000/bundles/app:v1"));
  EXPECT_TRUE(looks_like_registry_reference("localhost:5000/bundles/app"));
  EXPECT_TRUE(looks_like_registry_reference("reg.example/app:latest"));
  EXPECT_TRUE(looks_like_registry_reference("reg.example/app@sha512:" + std::string(128, 'a')));
  EXPECT_FALSE(looks_like_registry_reference("./out/bundle"));
  EXPECT_FALSE(looks_like_registry_reference("../bundle"));
  EXPECT_FALSE(looks_like_registry_reference("dist.v1/bundle"));
  EXPECT_FALSE(looks_like_registry_reference("bundle"));
  const auto sha512 = parse_pinned_reference("reg.example/app@sha512:" + std::string(128, 'a'));
  ASSERT_FALSE(sha512);
  EXPECT_EQ(sha512.error().code(), "E_REFERENCE");
}

TEST(RegistryClient, PlainHttpOnlyForLoopback)
{
  for (const char* host : {"127.0.0.1:5000", "127.1.2.3", "[::1]:5000", "localhost:5000", "LOCALHOST"}) {
    EXPECT_TRUE(is_loopback_host(host)) << host;
  }
  for (const char* host : {"registry.example:5000", "10.0.0.1", "localhost.example", "[::2]:5000"}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
  }
  ClientOptions options;
  options.plain_http = true;
  const auto remote = RegistryClient::create("registry.example", options);
  ASSERT_FALSE(remote);
  EXPECT_EQ(remote.error().code(), k_plain_http);
  const auto local = RegistryClient::create("localhost:5000", options);
  ASSERT_TRUE(local) << local.error().message();
  EXPECT_EQ(local->url("/v2/"), "http://localhost:5000/v2/");
}

// RFC 6750 b64token: CR/LF or a space would become header lines.
TEST(RegistryClient, TokensInRfc6750CharactersOnly)
{
  EXPECT_TRUE(is_valid_token("eyJhbGciOi.JIUzI1-NiJ9_~+/=="));
  EXPECT_FALSE(is_valid_token(""));
  EXPECT_FALSE(is_valid_token("abc\r\nX-Injected: 1"));
  EXPECT_FALSE(is_valid_token("abc def"));
  EXPECT_FALSE(is_valid_token("=abc"));
  EXPECT_FALSE(is_valid_token("ab=c"));
}

TEST(AuthChallenge, BearerWithQuotedParametersAndScopes)
{
  const auto c = parse_auth_challenge(
    R"(Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull repository:a/b:push")");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->scheme, AuthScheme::bearer);
  EXPECT_EQ(c->realm, "https://auth.example/token");
  EXPECT_EQ(c->service, "registry.example");
  EXPECT_EQ(c->scopes, (std::vector<std::string>{"repository:a/b:pull", "repository:a/b:push"}));
}

TEST(AuthChallenge, BasicAndRefusals)
{
  const auto basic = parse_auth_challenge(R"(Basic realm="test")");
  ASSERT_TRUE(basic);
  EXPECT_EQ(basic->scheme, AuthScheme::basic);
  EXPECT_FALSE(parse_auth_challenge(""));
  EXPECT_FALSE(parse_auth_challenge("Negotiate abc"));
  // A token realm over plain http would send the password in clear text.
  EXPECT_FALSE(parse_auth_challenge(R"(Bearer realm="http://auth.example/token")"));
  EXPECT_FALSE(parse_auth_challenge(R"(Bearer realm="http://127.0.0.1.example/token")"));
  EXPECT_FALSE(parse_auth_challenge(R"(Bearer realm="http://127.0.0.1:5000@registry.example/token")"));
  // On this machine (a --plain-http registry); the client allows it only there.
  EXPECT_TRUE(parse_auth_challenge(R"(Bearer realm="http://127.0.0.1:5000/token")"));
  EXPECT_FALSE(parse_auth_challenge(R"(Bearer realm="https://unterminated)"));
}

std::string
descriptor(std::string_view media_type, std::string_view extra = "")
{
  return fmt::format(R"({{"mediaType":"{}","digest":"{}","size":2{}}})", media_type, k_digest, extra);
}

TEST(OciDocument, BundleManifest)
{
  const auto text = fmt::format(
    R"({{"schemaVersion":2,"mediaType":"{}","artifactType":"{}","config":{},"layers":[{},{},{}],"subject":{}}})",
    k_image_manifest_type, k_bundle_artifact_type, descriptor(k_empty_config_type), descriptor(k_manifest_layer_type),
    descriptor(k_signature_layer_type),
    descriptor(k_slice_layer_type, R"(,"annotations":{"org.prewarm.slice.id":"cpu"})"),
    descriptor(k_image_manifest_type));
  const auto m = parse_oci_manifest(text);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->artifact_type, k_bundle_artifact_type);
  EXPECT_EQ(m->layers.size(), 3U);
  EXPECT_EQ(m->layers[2].annotations.at(std::string(k_slice_id_annotation)), "cpu");
  ASSERT_TRUE(m->subject);
  EXPECT_TRUE(single_layer(*m, k_signature_layer_type));
}

TEST(OciDocument, StrictFields)
{
  const auto config = descriptor(k_empty_config_type);
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"[]", "not a JSON object"},
    {"{", "not JSON"},
    {R"({"schemaVersion":1})", "schemaVersion"},
    {fmt::format(R"({{"schemaVersion":2,"config":{},"layers":{{}}}})", config), "layers"},
    {fmt::format(R"({{"schemaVersion":2,"config":{},"layers":[{{"mediaType":"x","digest":"sha256:ab","size":1}}]}})",
                 config),
     "layers[0].digest"},
    {fmt::format(R"({{"schemaVersion":2,"config":{},"layers":[{{"mediaType":"x","digest":"{}","size":-1}}]}})", config,
                 k_digest),
     "layers[0].size"},
    {fmt::format(R"({{"schemaVersion":2,"mediaType":"{}","config":{},"layers":[]}})", k_image_index_type, config),
     "mediaType"},
  };
  for (const auto& [text, field] : cases) {
    const auto m = parse_oci_manifest(text);
    ASSERT_FALSE(m) << text;
    EXPECT_EQ(m.error().code(), "E_OCI_FORMAT") << text;
    EXPECT_NE(m.error().message().find(field), std::string::npos) << m.error().message();
  }
}

TEST(OciDocument, SizeCapBeforeParsing)
{
  const std::string huge(k_max_oci_document_bytes + 1, ' ');
  const auto m = parse_oci_manifest(huge);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code(), "E_LIMIT");
}

TEST(OciDocument, ReferrersIndexAndFallbackTag)
{
  const auto text = fmt::format(R"({{"schemaVersion":2,"mediaType":"{}","manifests":[{}]}})", k_image_index_type,
                                descriptor(k_image_manifest_type, fmt::format(R"(,"artifactType":"{}")",
                                                                              k_bundle_artifact_type)));
  const auto index = parse_oci_index(text);
  ASSERT_TRUE(index) << index.error().message();
  ASSERT_EQ(index->manifests.size(), 1U);
  EXPECT_EQ(index->manifests[0].artifact_type, k_bundle_artifact_type);
  EXPECT_EQ(referrers_tag(k_digest), "sha256-" + std::string(64, 'a'));
}

} // namespace
} // namespace prewarm::registry
