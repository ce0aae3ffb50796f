// SPDX-License-Identifier: Apache-2.0
// runtime_env and custom caches of a command model: parsed, and every bad
// input named by FILE:LINE:COLUMN and field.
#include "test_inputs.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace prewarm::manifest {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::error_of;
using testing::parse;

std::string
command_manifest(const std::string& extra)
{
  return "version: 1\n"
         "models:\n"
         "  - name: hashcat\n"
         "    command:\n"
         "      argv: [hashcat, -m, \"0\"]\n" +
         extra +
         "precisions: [fp32]\n"
         "targets: [cpu]\n";
}

TEST(RuntimeNeeds, RuntimeEnvAndCachesAreRead)
{
  auto m = parse(command_manifest("      runtime_env: {PYOPENCL_NO_CACHE: \"1\"}\n"
                                  "      caches:\n"
                                  "        - {name: hashcat, variable: XDG_CACHE_HOME, subdir: hashcat/kernels}\n"));
  ASSERT_TRUE(m) << m.error().message();
  const auto& command = *m->models[0].command;
  EXPECT_EQ(command.runtime_env.at("PYOPENCL_NO_CACHE"), "1");
  ASSERT_EQ(command.caches.size(), 1u);
  EXPECT_EQ(command.caches[0].name, "hashcat");
  EXPECT_EQ(command.caches[0].variable, "XDG_CACHE_HOME");
  EXPECT_EQ(command.caches[0].subdir, "hashcat/kernels");
}

TEST(RuntimeNeeds, DeniedRuntimeEnvNamesTheLine)
{
  const auto message = error_of(command_manifest("      runtime_env:\n        LD_PRELOAD: /x.so\n"));
  EXPECT_THAT(message, StartsWith("test.yaml:7:9: models[0].command.runtime_env.LD_PRELOAD: variable LD_PRELOAD is "
                                  "denied"));
}

TEST(RuntimeNeeds, PythonVariablesAreDeniedToo)
{
  EXPECT_THAT(error_of(command_manifest("      runtime_env: {PYTHONPATH: /opt}\n")), HasSubstr("PYTHON*"));
}

// tinygrad's CACHEDB names its SQLite file: pointed at a directory, the
// application fails with sqlite's own error after the build ran. The
// manifest is refused first, with the declaration that works (app_hint.hpp).
TEST(RuntimeNeeds, CacheVariableThatNamesAFileIsRefusedWithTheDeclarationToUse)
{
  const auto message = error_of(command_manifest("      caches:\n        - {name: tinygrad, variable: CACHEDB}\n"));
  EXPECT_THAT(message, StartsWith("test.yaml:7:38: models[0].command.caches[0].variable: CACHEDB names tinygrad's "
                                  "SQLite file, not a directory"));
  EXPECT_THAT(message, HasSubstr("{variable: XDG_CACHE_HOME, subdir: tinygrad}"));
}

TEST(RuntimeNeeds, CustomCacheNamedLikeABuiltInKind)
{
  const auto message = error_of(command_manifest("      caches:\n        - {name: pocl, variable: XDG_CACHE_HOME}\n"));
  EXPECT_THAT(message, StartsWith("test.yaml:7:18: models[0].command.caches[0].name: custom cache name \"pocl\" "
                                  "collides with a built-in cache kind"));
}

TEST(RuntimeNeeds, CustomCacheOutsideItsDirectory)
{
  for (const auto* subdir : {"../etc", "/var/cache", "a/../../b"}) {
    const auto message =
      error_of(command_manifest(fmt::format("      caches:\n        - {{name: tool, variable: XDG_CACHE_HOME, subdir: "
                                            "\"{}\"}}\n",
                                            subdir)));
    EXPECT_THAT(message, StartsWith("test.yaml:7:"));
    EXPECT_THAT(message, HasSubstr("subdir: '"));
    EXPECT_THAT(message, HasSubstr("is not a relative path inside the cache directory"));
  }
}

TEST(RuntimeNeeds, TwoModelsLocatingCachesWithOneVariableAreRefusedBeforeAnyJob)
{
  const auto message = error_of(command_manifest("      caches:\n        - {name: hashcat, variable: XDG_CACHE_HOME}\n"
                                                 "  - name: opencv\n"
                                                 "    command:\n"
                                                 "      argv: [python3, blur.py]\n"
                                                 "      caches:\n"
                                                 "        - {name: opencv, variable: XDG_CACHE_HOME}\n"));
  EXPECT_THAT(message, StartsWith("test.yaml:12:11: models[1].command.caches[0].variable: models 'hashcat' and "
                                  "'opencv' both locate a cache with XDG_CACHE_HOME (first at test.yaml:7:11)"));
  EXPECT_THAT(message, HasSubstr("point each at a variable of its own"));
}

TEST(RuntimeNeeds, NoBuiltInKindsWhenTheProgramsCachesAreItsOwn)
{
  auto m = parse(command_manifest("      kinds: []\n      caches:\n        - {name: jax, variable: JAX_CACHE_DIR}\n"));
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_TRUE(m->models[0].command->no_builtin_kinds);
  EXPECT_TRUE(m->models[0].command->kinds.empty());
  EXPECT_THAT(error_of(command_manifest("      kinds: []\n")),
              StartsWith("test.yaml:6:14: models[0].command.kinds: an empty list captures nothing"));
}

TEST(RuntimeNeeds, CustomCacheWithABuiltInVariable)
{
  EXPECT_THAT(error_of(command_manifest("      caches:\n        - {name: tool, variable: POCL_CACHE_DIR}\n")),
              HasSubstr("the runtime sets it for the built-in cache kind pocl"));
}

TEST(RuntimeNeeds, OneVariableOneMeaning)
{
  EXPECT_THAT(error_of(command_manifest("      runtime_env: {XDG_CACHE_HOME: /x}\n"
                                        "      caches:\n        - {name: tool, variable: XDG_CACHE_HOME}\n")),
              HasSubstr("is also set by runtime_env"));
  EXPECT_THAT(error_of(command_manifest("      caches:\n        - {name: tool, variable: A_DIR}\n"
                                        "        - {name: tool, variable: B_DIR}\n")),
              HasSubstr("repeats the name of the entry at test.yaml:7:11"));
}

TEST(RuntimeNeeds, ValuesAreOneSignedLine)
{
  EXPECT_THAT(error_of(command_manifest("      runtime_env: {NOTE: \"two\\nlines\"}\n")),
              HasSubstr("printable ASCII"));
}

// A cache whose directory is a flag inside another variable's value
// (PYTENSOR_FLAGS="...,base_compiledir=DIR"): declared without a shim, and
// each mistake named by line, column and field.
std::string
flag_cache(const std::string& flag_lines)
{
  return "      caches:\n"
         "        - name: pytensor\n"
         "          variable: PYTENSOR_FLAGS\n" +
         flag_lines;
}

TEST(RuntimeNeeds, ACacheCarriedInAFlagsVariableIsRead)
{
  auto m = parse(command_manifest(flag_cache("          flag: \"base_compiledir={dir}\"\n"
                                             "          separator: \",\"\n")));
  ASSERT_TRUE(m) << m.error().message();
  const auto& cache = m->models[0].command->caches.at(0);
  ASSERT_TRUE(cache.flag);
  EXPECT_EQ(cache.flag->key, "base_compiledir");
  EXPECT_EQ(cache.flag->separator, bundle::FlagSeparator::comma);
  auto xla = parse(command_manifest("      caches:\n"
                                    "        - {name: xla, variable: XLA_FLAGS, separator: \" \",\n"
                                    "           flag: \"--xla_gpu_per_fusion_autotune_cache_dir={dir}\"}\n"));
  ASSERT_TRUE(xla) << xla.error().message();
  EXPECT_EQ(xla->models[0].command->caches.at(0).flag->separator, bundle::FlagSeparator::space);
}

TEST(RuntimeNeeds, EachBadFlagTemplateIsNamedByLineAndField)
{
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"base_compiledir=/var/cache", "no placeholder"},
    {"base_compiledir={dir},compiledir={dir}", "{dir} appears 2 times"},
    {"base_compiledir={cache}", "unknown placeholder \"{cache}\""},
    {"base_compiledir=${CACHE}", "\"${CACHE}\" is not expanded"},
    {"base_compiledir={dir}/x", "text after {dir}"},
  };
  for (const auto& [flag, what] : cases) {
    const auto message =
      error_of(command_manifest(flag_cache(fmt::format("          flag: \"{}\"\n          separator: \",\"\n", flag))));
    EXPECT_THAT(message, StartsWith("test.yaml:9:17: models[0].command.caches[0].flag: flag \"")) << flag;
    EXPECT_THAT(message, HasSubstr(what)) << flag;
  }
}

TEST(RuntimeNeeds, FlagAndSeparatorComeTogether)
{
  EXPECT_THAT(error_of(command_manifest(flag_cache("          flag: \"base_compiledir={dir}\"\n"))),
              StartsWith("test.yaml:9:17: models[0].command.caches[0].flag: flag needs separator"));
  EXPECT_THAT(error_of(command_manifest(flag_cache("          separator: \",\"\n"))),
              StartsWith("test.yaml:9:22: models[0].command.caches[0].separator: separator without flag"));
  EXPECT_THAT(error_of(command_manifest(flag_cache("          flag: \"base_compiledir={dir}\"\n"
                                                   "          separator: \";\"\n"))),
              StartsWith("test.yaml:10:22: models[0].command.caches[0].separator: expected \",\" or \" \""));
}

TEST(RuntimeNeeds, TheCommandsEnvMayNotSetTheCachesFlag)
{
  const auto message =
    error_of(command_manifest("      env: {PYTENSOR_FLAGS: \"floatX=float32,base_compiledir=/x\"}\n" +
                              flag_cache("          flag: \"base_compiledir={dir}\"\n"
                                         "          separator: \",\"\n")));
  EXPECT_THAT(message, StartsWith("test.yaml:6:29: models[0].command.env.PYTENSOR_FLAGS: PYTENSOR_FLAGS sets "
                                  "base_compiledir=/x, the flag custom cache pytensor (at test.yaml:8:11) carries"));
  // Its other flags are the application's own: kept.
  EXPECT_TRUE(parse(command_manifest("      env: {PYTENSOR_FLAGS: \"floatX=float32\"}\n" +
                                     flag_cache("          flag: \"base_compiledir={dir}\"\n"
                                                "          separator: \",\"\n"))));
}

} // namespace
} // namespace prewarm::manifest
