// SPDX-License-Identifier: Apache-2.0
// Custom caches and runtime env in the signed manifest: the grammar (one
// encoding, order, line numbers), the deny list, built-in kind collisions,
// and what a trust policy's install.kinds allows of them.
#include "bundle_test_support.hpp"

#include "bundle/bundle_manifest.hpp"
#include "bundle/custom_cache.hpp"
#include "bundle/runtime_variable.hpp"
#include "bundle/trust_policy.hpp"

#include <gtest/gtest.h>

namespace prewarm::bundle {
namespace {

using test::file_entry;
using test::replace_once;

Slice
hashcat_slice()
{
  Slice s;
  s.id = "cpu-hashcat";
  s.payload_sha256 = std::string(64, 'b');
  s.payload_size = 99;
  s.jobs = {"command cpu/hashcat/fp32: hashcat -m 0"};
  s.caches = {{"hashcat", "XDG_CACHE_HOME"}};
  s.environment = {{"PYOPENCL_NO_CACHE", "1"}, {"HASHCAT_NOTE", "a value with spaces and 'quotes'"}};
  s.directories = {"custom", "custom/hashcat", "custom/hashcat/hashcat", "pocl"};
  s.files = {file_entry("custom/hashcat/hashcat/shared.kernel", "kernel"), file_entry("pocl/k.so", "so")};
  s.uncompressed_size = 6 + 2;
  return s;
}

std::string
hashcat_bytes()
{
  auto manifest = test::make_manifest({hashcat_slice()});
  return serialize(manifest);
}

// env and exec skip the parse when this says false: it must be false only
// when parse() gives neither a cache nor an env setting.
TEST(RuntimeNeeds, ManifestWithoutCacheOrEnvLinesIsToldApart)
{
  EXPECT_TRUE(may_hold_caches_or_environment(hashcat_bytes()));

  auto only_env = hashcat_slice();
  only_env.caches.clear();
  only_env.directories = {"pocl"};
  only_env.files = {file_entry("pocl/k.so", "so")};
  only_env.uncompressed_size = 2;
  EXPECT_TRUE(may_hold_caches_or_environment(serialize(test::make_manifest({only_env}))));

  auto neither = only_env;
  neither.environment.clear();
  // A file and a job whose names hold the words do not count: only a line's keyword does.
  neither.jobs = {"command cpu/env cache/fp32: env cache x"};
  neither.directories = {"pocl", "pocl/cache"};
  neither.files = {file_entry("pocl/cache/env", "so")};
  const auto bytes = serialize(test::make_manifest({neither}));
  EXPECT_FALSE(may_hold_caches_or_environment(bytes)) << bytes;
  const auto parsed = parse(bytes);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_TRUE(parsed->slices.front().caches.empty());
  EXPECT_TRUE(parsed->slices.front().environment.empty());
}

TEST(RuntimeNeeds, CacheAndEnvLinesRoundTripInOrder)
{
  const auto bytes = hashcat_bytes();
  const auto parsed = parse(bytes);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(serialize(*parsed), bytes);
  const auto& slice = parsed->slices.front();
  ASSERT_EQ(slice.caches.size(), 1u);
  EXPECT_EQ(slice.caches[0].variable, "XDG_CACHE_HOME");
  ASSERT_EQ(slice.environment.size(), 2u);
  EXPECT_EQ(slice.environment[0].name, "HASHCAT_NOTE"); // normalize sorted them
  EXPECT_EQ(slice.environment[0].value, "a value with spaces and 'quotes'");
  const auto job = bytes.find("\njob ");
  const auto cache = bytes.find("\ncache hashcat XDG_CACHE_HOME\n");
  const auto env = bytes.find("\nenv HASHCAT_NOTE a value");
  const auto dir = bytes.find("\ndir ");
  ASSERT_NE(cache, std::string::npos) << bytes;
  EXPECT_LT(job, cache);
  EXPECT_LT(cache, env);
  EXPECT_LT(env, dir);
}

TEST(RuntimeNeeds, DeniedVariableInASignedManifestHasItsOwnCodeAndLine)
{
  const auto bytes = replace_once(hashcat_bytes(), "env PYOPENCL_NO_CACHE 1\n", "env PYTHONPATH /evil\n");
  const auto parsed = parse(bytes);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code(), "E_DENIED_VARIABLE") << parsed.error().message();
  EXPECT_NE(parsed.error().message().find("manifest:"), std::string::npos) << parsed.error().message();
  EXPECT_NE(parsed.error().message().find("PYTHONPATH"), std::string::npos);
}

TEST(RuntimeNeeds, CustomCacheVariableIsCheckedLikeEnv)
{
  const auto bytes = replace_once(hashcat_bytes(), "cache hashcat XDG_CACHE_HOME\n", "cache hashcat LD_LIBRARY_PATH\n");
  const auto parsed = parse(bytes);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code(), "E_DENIED_VARIABLE") << parsed.error().message();
}

TEST(RuntimeNeeds, CustomCacheNamedLikeABuiltInKindIsRefused)
{
  auto slice = hashcat_slice();
  slice.caches = {{"pocl", "XDG_CACHE_HOME"}};
  auto status = validate(test::make_manifest({slice}));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), "E_CUSTOM_CACHE_NAME") << status.error().message();
  EXPECT_FALSE(check_custom_cache_name("custom"));
  EXPECT_FALSE(check_custom_cache_name("Bad/Name"));
  EXPECT_TRUE(check_custom_cache_name("hashcat"));
}

TEST(RuntimeNeeds, EveryCustomPathNeedsADeclaredCacheAndEveryCacheADir)
{
  auto undeclared = hashcat_slice();
  undeclared.caches.clear();
  auto status = validate(test::make_manifest({undeclared}));
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("has no cache line"), std::string::npos) << status.error().message();

  auto no_dir = hashcat_slice();
  no_dir.caches.push_back({"other", "OTHER_CACHE"});
  status = validate(test::make_manifest({no_dir}));
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("has no dir line custom/other"), std::string::npos)
    << status.error().message();
}

TEST(RuntimeNeeds, LinesOutOfOrderOrTwiceAreNotCanonical)
{
  const auto bytes = hashcat_bytes();
  // env before cache
  auto swapped = replace_once(bytes, "cache hashcat XDG_CACHE_HOME\n", "");
  swapped = replace_once(swapped, "env PYOPENCL_NO_CACHE 1\n", "env PYOPENCL_NO_CACHE 1\ncache hashcat XDG_CACHE_HOME\n");
  EXPECT_FALSE(parse(swapped));
  auto twice = replace_once(bytes, "env PYOPENCL_NO_CACHE 1\n", "env PYOPENCL_NO_CACHE 1\nenv PYOPENCL_NO_CACHE 1\n");
  EXPECT_FALSE(parse(twice));
  // A cache variable that an env line sets too.
  auto slice = hashcat_slice();
  slice.environment.push_back({"XDG_CACHE_HOME", "/x"});
  EXPECT_FALSE(validate(test::make_manifest({slice})));
}

TEST(RuntimeNeeds, DenyList)
{
  for (const auto* denied : {"LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "PATH", "PYTHONPATH",
                             "PYTHONSTARTUP", "GCONV_PATH", "OPENCL_LAYERS", "OCL_ICD_VENDORS", "PREWARM_ROOT",
                             "POCL_CACHE_DIR", "CUDA_CACHE_DISABLE", "TORCHINDUCTOR_CACHE_DIR", "HOME", "BASH_ENV"}) {
    const auto status = check_exported_variable(denied);
    ASSERT_FALSE(status) << denied;
    EXPECT_EQ(status.error().code(), "E_DENIED_VARIABLE") << denied;
  }
  for (const auto* allowed : {"PYOPENCL_NO_CACHE", "XDG_CACHE_HOME", "HF_HUB_OFFLINE", "_underscore"}) {
    EXPECT_TRUE(check_exported_variable(allowed)) << allowed;
  }
  EXPECT_EQ(check_exported_variable("1BAD").error().code(), "E_MANIFEST_FORMAT");
  EXPECT_FALSE(is_variable_value(""));
  EXPECT_FALSE(is_variable_value("tab\there"));
  EXPECT_FALSE(is_variable_value(" lead"));
  EXPECT_TRUE(is_variable_value("it's $HOME `x` \"q\""));
}

TEST(RuntimeNeeds, TrustPolicyAllowsCustomCachesAllOrByName)
{
  ManifestPolicy all;
  all.allowed_kinds = std::set<std::string>{"pocl", "custom"};
  ManifestPolicy one;
  one.allowed_kinds = std::set<std::string>{"custom/hashcat"};
  ManifestPolicy builtin_only;
  builtin_only.allowed_kinds = std::set<std::string>{"pocl"};
  EXPECT_TRUE(kind_allowed(all, "custom/anything/x"));
  EXPECT_TRUE(kind_allowed(one, "custom/hashcat/k"));
  EXPECT_TRUE(kind_allowed(one, "custom"));
  EXPECT_FALSE(kind_allowed(one, "custom/other/k"));
  EXPECT_FALSE(kind_allowed(one, "pocl/k"));
  EXPECT_FALSE(kind_allowed(builtin_only, "custom"));
  EXPECT_FALSE(kind_allowed(builtin_only, "custom/hashcat/k"));

  const auto manifest = test::make_manifest({hashcat_slice()});
  const auto refused = check_manifest_policy(builtin_only, std::string(64, 'c'), manifest);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), "E_POLICY_KIND");
  one.allowed_kinds->insert("pocl");
  EXPECT_TRUE(check_manifest_policy(one, std::string(64, 'c'), manifest));

  EXPECT_TRUE(check_allowed_kind_name("custom"));
  EXPECT_TRUE(check_allowed_kind_name("custom/hashcat"));
  EXPECT_FALSE(check_allowed_kind_name("custom/pocl"));
  EXPECT_FALSE(check_allowed_kind_name("hashcat"));
}

} // namespace
} // namespace prewarm::bundle
