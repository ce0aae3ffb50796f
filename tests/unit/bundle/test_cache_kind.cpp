// SPDX-License-Identifier: Apache-2.0
#include "bundle/cache_kind.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

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
  EXPECT_EQ(all_cache_kinds().size(), 7u);
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
                                            {"TORCHINDUCTOR_AUTOGRAD_CACHE", "1"}}));
}

} // namespace
} // namespace prewarm::bundle
