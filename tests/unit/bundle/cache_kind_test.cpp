// SPDX-License-Identifier: Apache-2.0
#include "bundle/cache_kind.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace prewarm::bundle {
namespace {

std::map<std::string, std::string>
env_map(CacheKind kind)
{
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : cache_environment(kind, "/cache/x", 12345)) {
    EXPECT_TRUE(out.emplace(name, value).second) << "duplicate " << name;
  }
  return out;
}

TEST(CacheKind, NamesRoundTrip)
{
  EXPECT_EQ(all_cache_kinds().size(), 9u);
  for (const auto kind : all_cache_kinds()) {
    const auto parsed = parse_cache_kind(to_string(kind));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, kind);
  }
  const auto bad = parse_cache_kind("Pocl");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("known: programs, pocl"), std::string::npos);
}

TEST(CacheKind, EveryKindPointsAtTheDirectory)
{
  for (const auto kind : all_cache_kinds()) {
    const auto env = cache_environment(kind, "/cache/x", 0);
    ASSERT_FALSE(env.empty()) << to_string(kind);
    EXPECT_EQ(env.front().value, "/cache/x") << to_string(kind);
  }
}

TEST(CacheKind, EnvironmentPerKind)
{
  EXPECT_EQ(env_map(CacheKind::programs), (std::map<std::string, std::string>{{"PREWARM_PROGRAM_STORE", "/cache/x"}}));
  EXPECT_EQ(env_map(CacheKind::pocl), (std::map<std::string, std::string>{{"POCL_CACHE_DIR", "/cache/x"}}));
  EXPECT_EQ(env_map(CacheKind::cuda), (std::map<std::string, std::string>{
                                        {"CUDA_CACHE_PATH", "/cache/x"}, {"CUDA_CACHE_DISABLE", "0"}, {"CUDA_CACHE_MAXSIZE", "4294967296"}}));
  EXPECT_EQ(env_map(CacheKind::neo), (std::map<std::string, std::string>{
                                       {"NEO_CACHE_DIR", "/cache/x"}, {"NEO_CACHE_PERSISTENT", "1"}, {"NEO_CACHE_MAX_SIZE", "0"}}));
  EXPECT_EQ(env_map(CacheKind::sycl), (std::map<std::string, std::string>{{"SYCL_CACHE_DIR", "/cache/x"}, {"SYCL_CACHE_PERSISTENT", "1"}}));
  EXPECT_EQ(env_map(CacheKind::triton), (std::map<std::string, std::string>{{"TRITON_CACHE_DIR", "/cache/x"}}));
  EXPECT_EQ(env_map(CacheKind::inductor), (std::map<std::string, std::string>{
                                            {"TORCHINDUCTOR_CACHE_DIR", "/cache/x"},
                                            {"TORCHINDUCTOR_FX_GRAPH_CACHE", "1"},
                                            {"TORCHINDUCTOR_AUTOGRAD_CACHE", "1"},
                                            {"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "0"}}));
  // dynamo: a whole Inductor cache, with Dynamo's precompiled frames loaded.
  EXPECT_EQ(env_map(CacheKind::dynamo), (std::map<std::string, std::string>{
                                          {"TORCHINDUCTOR_CACHE_DIR", "/cache/x"},
                                          {"TORCHINDUCTOR_FX_GRAPH_CACHE", "1"},
                                          {"TORCHINDUCTOR_AUTOGRAD_CACHE", "1"},
                                          {"TORCH_CACHING_PRECOMPILE", "1"},
                                          {"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "0"}}));
  // pycache: Python's bytecode tree, one variable.
  EXPECT_EQ(env_map(CacheKind::pycache), (std::map<std::string, std::string>{{"PYTHONPYCACHEPREFIX", "/cache/x"}}));
}

// Where a torch kind is installed (never at its capture) Inductor loads the
// cached kernels in the application's process: from its compile workers they
// come back without the coordinate-descent mark of their .best_config and
// are tuned again. No other kind adds a variable, and none of these is also a
// capture variable (the capture keeps Inductor's parallel compile).
TEST(CacheKind, InstalledEnvironmentPerKind)
{
  for (const auto kind : all_cache_kinds()) {
    const auto added = installed_environment(kind);
    if (kind == CacheKind::inductor || kind == CacheKind::dynamo) {
      ASSERT_EQ(added.size(), 1u) << to_string(kind);
      EXPECT_EQ(added.front().name, "TORCHINDUCTOR_COMPILE_THREADS");
      EXPECT_EQ(added.front().value, "1");
    } else {
      EXPECT_TRUE(added.empty()) << to_string(kind);
    }
    for (const auto& setting : added) {
      EXPECT_FALSE(env_map(kind).contains(setting.name)) << setting.name << " is set at the capture too";
    }
  }
}

// One row per kind, found by kind and by name; the rules the builder's
// capture and the runtime's installer read differ where kernel-caches.md says.
TEST(CacheKind, OneRuleRowPerKind)
{
  for (const auto kind : all_cache_kinds()) {
    const auto& rules = rules_of(kind);
    EXPECT_EQ(rules.kind, kind);
    EXPECT_EQ(rules.name, to_string(kind));
    EXPECT_EQ(find_kind_rules(rules.name), &rules);
    ASSERT_NE(rules.environment, nullptr) << rules.name;
  }
  EXPECT_EQ(find_kind_rules("custom"), nullptr);
  EXPECT_EQ(rules_of(CacheKind::pocl).default_location_under_home, ".cache/pocl/kcache");
  EXPECT_EQ(rules_of(CacheKind::inductor).default_location_under_home, ""); // /tmp, outside HOME
  EXPECT_TRUE(rules_of(CacheKind::neo).capture_bookkeeping("cl_cache.a1B2c3"));
  EXPECT_FALSE(rules_of(CacheKind::neo).capture_bookkeeping("cl_cache.a1B2c"));
  EXPECT_EQ(rules_of(CacheKind::cuda).capture_bookkeeping, nullptr); // shipped whole
  // Only sycl has install hygiene: a stale lock would hide its entry.
  for (const auto kind : all_cache_kinds()) {
    EXPECT_EQ(rules_of(kind).install_bookkeeping != nullptr, kind == CacheKind::sycl) << to_string(kind);
  }
  EXPECT_TRUE(rules_of(CacheKind::sycl).install_bookkeeping("entry.lock"));
  EXPECT_TRUE(rules_of(CacheKind::sycl).install_bookkeeping("cache_size.txt"));
  EXPECT_FALSE(rules_of(CacheKind::sycl).install_bookkeeping("code.bin"));
}

// The kinds' list and names are the rows: in enum order, each with the
// source of its rules.
TEST(CacheKind, TheListOfKindsIsTheRows)
{
  std::size_t i = 0;
  for (const auto kind : all_cache_kinds()) {
    EXPECT_EQ(static_cast<std::size_t>(kind), i++);
    EXPECT_FALSE(rules_of(kind).source.empty()) << to_string(kind);
  }
  EXPECT_EQ(i, cache_kind_count);
  const auto bad = parse_cache_kind("nope");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("known: programs, pocl, cuda, neo, sycl, triton, inductor, dynamo, pycache"),
            std::string::npos)
    << bad.error().message();
}

// Who writes a kind decides where the builder makes it (manifest/plan.cpp):
// what each driver is, by the research notes.
TEST(CacheKind, WhoWritesEachKind)
{
  for (const auto kind : all_cache_kinds()) {
    const auto& rules = rules_of(kind);
    EXPECT_EQ(rules.written_by_intel_runtime(), kind == CacheKind::neo || kind == CacheKind::sycl) << rules.name;
    EXPECT_EQ(rules.served_by_opencl_layer, kind == CacheKind::programs) << rules.name;
    EXPECT_EQ(rules.written_by == KindWriter::python_interpreter, kind == CacheKind::pycache) << rules.name;
    // NEO caches nothing into a directory that is not there (kernel-caches.md §2).
    EXPECT_EQ(rules.directory_must_exist, kind == CacheKind::neo) << rules.name;
  }
}

// Two kinds that locate one cache by the same variable exclude each other.
TEST(CacheKind, KindsThatShareTheirDirectoryVariableClash)
{
  const std::vector<CacheKind> torch = {CacheKind::triton, CacheKind::inductor, CacheKind::dynamo};
  const auto clash = find_kind_clash(torch);
  ASSERT_TRUE(clash);
  EXPECT_EQ(clash->first, CacheKind::inductor);
  EXPECT_EQ(clash->second, CacheKind::dynamo);
  EXPECT_EQ(clash->variable, "TORCHINDUCTOR_CACHE_DIR");
  // Every other pair of kinds may be named together.
  for (const auto a : all_cache_kinds()) {
    for (const auto b : all_cache_kinds()) {
      const std::vector<CacheKind> pair = {a, b};
      const bool torch_pair =
        (a == CacheKind::inductor && b == CacheKind::dynamo) || (a == CacheKind::dynamo && b == CacheKind::inductor);
      EXPECT_EQ(find_kind_clash(pair).has_value(), torch_pair) << to_string(a) << " " << to_string(b);
    }
  }
}

// Capture hygiene, name by name: what each driver leaves beside its entries.
TEST(CacheKind, CaptureBookkeepingPerKind)
{
  const auto is_bookkeeping = [](CacheKind kind, std::string_view name) {
    const auto rule = rules_of(kind).capture_bookkeeping;
    return rule != nullptr && rule(name);
  };
  EXPECT_TRUE(is_bookkeeping(CacheKind::neo, "config.file"));
  EXPECT_TRUE(is_bookkeeping(CacheKind::neo, "cl_cache.a1B2c3"));
  EXPECT_TRUE(is_bookkeeping(CacheKind::neo, "l0_cache.XyZ123"));
  EXPECT_FALSE(is_bookkeeping(CacheKind::neo, "0123abcd.cl_cache"));
  EXPECT_FALSE(is_bookkeeping(CacheKind::neo, "cl_cache.toolongname"));
  EXPECT_TRUE(is_bookkeeping(CacheKind::sycl, "0.lock"));
  EXPECT_TRUE(is_bookkeeping(CacheKind::sycl, "cache_size.txt"));
  EXPECT_FALSE(is_bookkeeping(CacheKind::sycl, "0.bin"));
  EXPECT_TRUE(is_bookkeeping(CacheKind::pocl, "tempfile_VL832x"));
  EXPECT_TRUE(is_bookkeeping(CacheKind::pocl, "_UNCACHED_abc"));
  EXPECT_FALSE(is_bookkeeping(CacheKind::pocl, "program.bc"));
  EXPECT_TRUE(is_bookkeeping(CacheKind::triton, "tmp.pid_12_abc"));
  EXPECT_FALSE(is_bookkeeping(CacheKind::triton, "kernel.cubin"));
  EXPECT_TRUE(is_bookkeeping(CacheKind::inductor, "abc.lock"));
  EXPECT_TRUE(is_bookkeeping(CacheKind::dynamo, "abc.lock"));
  EXPECT_FALSE(is_bookkeeping(CacheKind::dynamo, "entry"));
  // Python writes <module>.pyc.<id> and renames it into place.
  EXPECT_TRUE(is_bookkeeping(CacheKind::pycache, "json.cpython-312.pyc.140230"));
  EXPECT_FALSE(is_bookkeeping(CacheKind::pycache, "json.cpython-312.pyc"));
  EXPECT_FALSE(is_bookkeeping(CacheKind::cuda, "index"));
  EXPECT_FALSE(is_bookkeeping(CacheKind::cuda, "config.file"));
}

} // namespace
} // namespace prewarm::bundle
