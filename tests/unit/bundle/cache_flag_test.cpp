// SPDX-License-Identifier: Apache-2.0
// A custom cache carried as a flag inside another variable's value
// (bundle/custom_cache.hpp): the template as a user writes it (each bad
// form named), the merge into the application's own value (its flags kept,
// its own KEY=... replaced and reported), the signed `cache` line and the
// allow list's vetted (variable, flag) pairs.
#include "bundle_test_support.hpp"

#include "bundle/bundle_manifest.hpp"
#include "bundle/custom_cache.hpp"
#include "bundle/runtime_variable.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace prewarm::bundle {
namespace {

using test::file_entry;
using test::replace_once;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string
template_error(std::string_view text)
{
  auto parsed = parse_flag_template(text, FlagSeparator::comma);
  EXPECT_FALSE(parsed) << text;
  if (parsed) {
    return {};
  }
  EXPECT_EQ(parsed.error().code(), "E_MANIFEST_FORMAT");
  return parsed.error().message();
}

TEST(CacheFlag, TemplateIsKeyEqualsPlaceholder)
{
  auto pytensor = parse_flag_template("base_compiledir={dir}", FlagSeparator::comma);
  ASSERT_TRUE(pytensor) << pytensor.error().message();
  EXPECT_EQ(pytensor->key, "base_compiledir");
  EXPECT_EQ(flag_template(*pytensor), "base_compiledir={dir}");
  auto neuron = parse_flag_template("--cache_dir={dir}", FlagSeparator::space);
  ASSERT_TRUE(neuron) << neuron.error().message();
  EXPECT_EQ(neuron->key, "--cache_dir");
  EXPECT_EQ(neuron->separator, FlagSeparator::space);
}

TEST(CacheFlag, EachBadTemplateSaysWhatIsWrong)
{
  EXPECT_THAT(template_error(""), HasSubstr("empty"));
  EXPECT_THAT(template_error("base_compiledir=/var/cache"), HasSubstr("no placeholder"));
  EXPECT_THAT(template_error("base_compiledir={dir}{dir}"), HasSubstr("{dir} appears 2 times"));
  EXPECT_THAT(template_error("base_compiledir={path}"), HasSubstr("unknown placeholder \"{path}\""));
  EXPECT_THAT(template_error("base_compiledir={DIR}"), HasSubstr("unknown placeholder \"{DIR}\""));
  EXPECT_THAT(template_error("base_compiledir=${HOME}/x"), HasSubstr("\"${HOME}/x\" is not expanded"));
  EXPECT_THAT(template_error("base_compiledir=$DIR"), HasSubstr("\"$DIR\" is not expanded"));
  EXPECT_THAT(template_error("base_compiledir={dir"), HasSubstr("unknown placeholder \"{dir\""));
  EXPECT_THAT(template_error("base_compiledir={dir}/sub"), HasSubstr("text after {dir}"));
  EXPECT_THAT(template_error("{dir}"), HasSubstr("expected KEY={dir}"));
  EXPECT_THAT(template_error("base_compiledir {dir}"), HasSubstr("expected KEY={dir}"));
  EXPECT_THAT(template_error("floatX=float32,base_compiledir={dir}"), HasSubstr("expected KEY={dir}"));
  EXPECT_THAT(template_error("---x={dir}"), HasSubstr("expected KEY={dir}"));
}

TEST(CacheFlag, MergeKeepsTheApplicationsFlagsAndAppendsTheDirectory)
{
  const CacheFlag pytensor{"base_compiledir", FlagSeparator::comma};
  auto alone = merge_cache_flag("", pytensor, "/r/custom/pytensor");
  ASSERT_TRUE(alone) << alone.error().message();
  EXPECT_EQ(alone->value, "base_compiledir=/r/custom/pytensor");
  EXPECT_TRUE(alone->replaced.empty());

  auto kept = merge_cache_flag("floatX=float32,mode=FAST_RUN", pytensor, "/r/custom/pytensor");
  ASSERT_TRUE(kept) << kept.error().message();
  EXPECT_EQ(kept->value, "floatX=float32,mode=FAST_RUN,base_compiledir=/r/custom/pytensor");
  EXPECT_TRUE(kept->replaced.empty());

  // base_compiledir_x is another flag; compiledir (PyTensor's own, derived
  // from base_compiledir) is not the cache's key either.
  auto lookalike = merge_cache_flag("base_compiledir_x=1,compiledir=/c", pytensor, "/d");
  ASSERT_TRUE(lookalike) << lookalike.error().message();
  EXPECT_EQ(lookalike->value, "base_compiledir_x=1,compiledir=/c,base_compiledir=/d");
  EXPECT_TRUE(lookalike->replaced.empty());
}

TEST(CacheFlag, TheApplicationsOwnDirectoryIsReplacedAndReported)
{
  const CacheFlag pytensor{"base_compiledir", FlagSeparator::comma};
  auto merged = merge_cache_flag("floatX=float32, base_compiledir=/home/me/pt ,,base_compiledir", pytensor, "/d");
  ASSERT_TRUE(merged) << merged.error().message();
  EXPECT_EQ(merged->value, "floatX=float32,base_compiledir=/d");
  EXPECT_THAT(merged->replaced, ElementsAre("base_compiledir=/home/me/pt", "base_compiledir"));
  EXPECT_EQ(conflicting_flags("floatX=float32, base_compiledir=/home/me/pt ,,base_compiledir", pytensor),
            merged->replaced);

  const CacheFlag xla{"--xla_gpu_per_fusion_autotune_cache_dir", FlagSeparator::space};
  auto spaced = merge_cache_flag("  --xla_cpu_enable_fast_math=false\t--xla_gpu_per_fusion_autotune_cache_dir=/old  "
                                 "--xla_force_host_platform_device_count=2 ",
                                 xla, "/d");
  ASSERT_TRUE(spaced) << spaced.error().message();
  EXPECT_EQ(spaced->value, "--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=2 "
                           "--xla_gpu_per_fusion_autotune_cache_dir=/d");
  EXPECT_THAT(spaced->replaced, ElementsAre("--xla_gpu_per_fusion_autotune_cache_dir=/old"));
}

TEST(CacheFlag, ADirectoryTheApplicationWouldSplitIsRefused)
{
  const CacheFlag pytensor{"base_compiledir", FlagSeparator::comma};
  for (const auto* dir : {"/r,oot/custom/pytensor", "/r oot/custom", "/r'oot", "/r\"oot", "/r\\oot"}) {
    auto merged = merge_cache_flag("floatX=float32", pytensor, dir);
    ASSERT_FALSE(merged) << dir;
    EXPECT_THAT(merged.error().message(), HasSubstr("which the application would read as the end of the flag"));
  }
}

Slice
pytensor_slice()
{
  Slice s;
  s.id = "cpu-pytensor";
  s.payload_sha256 = std::string(64, 'c');
  s.payload_size = 10;
  s.jobs = {"command cpu/pt/fp32: python pt.py"};
  s.caches = {{"pytensor", "PYTENSOR_FLAGS", CacheFlag{"base_compiledir", FlagSeparator::comma}},
              {"xla", "XLA_FLAGS", CacheFlag{"--xla_gpu_per_fusion_autotune_cache_dir", FlagSeparator::space}}};
  s.directories = {"custom", "custom/pytensor", "custom/xla"};
  s.files = {file_entry("custom/pytensor/mod.so", "so"), file_entry("custom/xla/a", "a")};
  s.uncompressed_size = 3;
  return s;
}

TEST(CacheFlag, TheCacheLineCarriesTheSeparatorAndTheTemplate)
{
  const auto bytes = serialize(test::make_manifest({pytensor_slice()}));
  EXPECT_THAT(bytes, HasSubstr("\ncache pytensor PYTENSOR_FLAGS comma base_compiledir={dir}\n"));
  EXPECT_THAT(bytes, HasSubstr("\ncache xla XLA_FLAGS space --xla_gpu_per_fusion_autotune_cache_dir={dir}\n"));
  const auto parsed = parse(bytes);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(serialize(*parsed), bytes);
  EXPECT_EQ(parsed->slices.front().caches, pytensor_slice().caches);

  const auto old_line = "cache pytensor PYTENSOR_FLAGS comma base_compiledir={dir}\n";
  for (const auto* bad :
       {"cache pytensor PYTENSOR_FLAGS comma\n", "cache pytensor PYTENSOR_FLAGS semicolon base_compiledir={dir}\n",
        "cache pytensor PYTENSOR_FLAGS comma base_compiledir={dir}/x\n",
        "cache pytensor PYTENSOR_FLAGS comma cxx={dir} x\n"}) {
    const auto damaged = parse(replace_once(bytes, old_line, bad));
    ASSERT_FALSE(damaged) << bad;
    EXPECT_THAT(damaged.error().message(), HasSubstr("manifest:")) << bad;
  }
}

TEST(CacheFlag, OnlyVettedFlagsOfAVariableAreAllowedWithoutAPolicy)
{
  const std::set<std::string, std::less<>> none;
  EXPECT_TRUE(check_allowed_variable("PYTENSOR_FLAGS", "base_compiledir", VariableRole::cache_flag, none));
  EXPECT_TRUE(check_allowed_variable("NEURON_CC_FLAGS", "--cache_dir", VariableRole::cache_flag, none));
  // The same variable carries the compiler PyTensor runs: never a bundle's to set.
  const auto cxx = check_allowed_variable("PYTENSOR_FLAGS", "cxx", VariableRole::cache_flag, none);
  ASSERT_FALSE(cxx);
  EXPECT_EQ(cxx.error().code(), "E_VARIABLE_NOT_ALLOWED");
  EXPECT_THAT(cxx.error().message(), HasSubstr("not a vetted cache-locating flag"));
  EXPECT_FALSE(check_allowed_variable("PYTENSOR_FLAGS", "", VariableRole::cache_location, none));
  EXPECT_TRUE(check_allowed_variable("PYTENSOR_FLAGS", "cxx", VariableRole::cache_flag, {"PYTENSOR_FLAGS"}));
}

} // namespace
} // namespace prewarm::bundle
