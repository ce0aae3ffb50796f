// SPDX-License-Identifier: Apache-2.0
// runtime_env and custom caches of a command model: parsed, and every bad
// input named by FILE:LINE:COLUMN and field.
#include "test_inputs.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

} // namespace
} // namespace prewarm::manifest
