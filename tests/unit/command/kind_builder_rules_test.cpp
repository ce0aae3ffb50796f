// SPDX-License-Identifier: Apache-2.0
#include "command/kind_builder_rules.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace prewarm::command {
namespace {

using bundle::CacheKind;

// Written out here, not read from the table: the kinds a command that names
// none captures (dynamo and pycache are opt-in: kernel-caches.md §8, and
// bytecode the image may not want).
TEST(KindBuilderRules, EveryKindButTheOptInOnesIsCapturedByDefault)
{
  for (const auto kind : bundle::all_cache_kinds()) {
    const bool opt_in = kind == CacheKind::dynamo || kind == CacheKind::pycache;
    EXPECT_EQ(builder_rules_of(kind).default_capture == DefaultCapture::opt_in, opt_in) << to_string(kind);
    EXPECT_EQ(builder_rules_of(kind).kind, kind);
    EXPECT_FALSE(builder_rules_of(kind).source.empty()) << to_string(kind);
  }
}

TEST(KindBuilderRules, TheFactsAKindNeedsOfTheBuildHost)
{
  const auto facts = [](std::vector<CacheKind> kinds) { return facts_needed(kinds); };
  EXPECT_EQ(facts({}), HostFacts::none);
  EXPECT_EQ(facts({CacheKind::cuda}), HostFacts::nvidia_gpus);
  for (const auto kind : {CacheKind::programs, CacheKind::pocl, CacheKind::neo, CacheKind::sycl}) {
    EXPECT_EQ(facts({kind}), HostFacts::opencl_devices) << to_string(kind);
  }
  for (const auto kind : {CacheKind::triton, CacheKind::inductor, CacheKind::dynamo}) {
    EXPECT_EQ(facts({kind}), HostFacts::nvidia_gpus | HostFacts::frameworks) << to_string(kind);
  }
  // Bytecode depends on the Python version only.
  EXPECT_EQ(facts({CacheKind::pycache}), HostFacts::frameworks);
  const auto together = facts({CacheKind::pocl, CacheKind::pycache});
  EXPECT_TRUE(needs(together, HostFacts::opencl_devices));
  EXPECT_TRUE(needs(together, HostFacts::frameworks));
  EXPECT_FALSE(needs(together, HostFacts::nvidia_gpus));
}

TEST(KindBuilderRules, WhatTheCaptureSetsUpBesideTheVariables)
{
  const std::vector<CacheKind> all(bundle::all_cache_kinds().begin(), bundle::all_cache_kinds().end());
  EXPECT_TRUE(sets_up(std::vector{CacheKind::pycache}, CaptureSets::bytecode_writing));
  // Both torch.compile kinds: the hook pins Triton's ptxas for either (it
  // saves Dynamo's frames only where precompile is on, the dynamo kind's).
  EXPECT_TRUE(sets_up(std::vector{CacheKind::dynamo}, CaptureSets::torch_capture_hook));
  EXPECT_TRUE(sets_up(std::vector{CacheKind::inductor}, CaptureSets::torch_capture_hook));
  EXPECT_TRUE(sets_up(std::vector{CacheKind::programs}, CaptureSets::opencl_layer_recording));
  EXPECT_FALSE(
    sets_up(std::vector{CacheKind::triton, CacheKind::pocl, CacheKind::cuda, CacheKind::neo, CacheKind::sycl},
            CaptureSets::torch_capture_hook));
  int set_up = 0;
  for (const auto what :
       {CaptureSets::bytecode_writing, CaptureSets::torch_capture_hook, CaptureSets::opencl_layer_recording}) {
    set_up += sets_up(all, what) ? 1 : 0;
  }
  EXPECT_EQ(set_up, 3);
}

} // namespace
} // namespace prewarm::command
