// SPDX-License-Identifier: Apache-2.0
// The application rows (app_hint.hpp): each row is whole, and each lookup
// finds what the applications showed, tried as a user would.
#include "bundle/app_hint.hpp"
#include "bundle/runtime_variable.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace prewarm::bundle {
namespace {

TEST(AppHint, EveryRowSaysWhatItIsAndWhereItWasSeen)
{
  for (const auto& hint : app_hints()) {
    SCOPED_TRACE(std::string(hint.app));
    EXPECT_FALSE(hint.app.empty());
    EXPECT_FALSE(hint.source.empty()) << "a row says where it was seen";
    const int found_by = !hint.variable.empty() + !hint.kind.empty() + !hint.home_dir_not_a_cache.empty();
    EXPECT_GE(found_by, 1) << "a row is found by a variable, a kind or a HOME directory";
    EXPECT_TRUE(hint.variable.empty() || hint.kind.empty()) << "by a custom cache's variable or by a kind, not both";
    EXPECT_TRUE(hint.subdir.empty() || !hint.variable.empty());
    EXPECT_EQ(hint.file_variable.empty(), hint.names_a_file.empty()) << "a file variable comes with what to use";
    const bool says_something = !hint.miss_hint.empty() || !hint.rewritten_suffix.empty() ||
                                !hint.names_a_file.empty() || !hint.home_dir_not_a_cache.empty() ||
                                hint.device != CacheDevice::job_device || !hint.frameworks.empty() ||
                                hint.keys_on_kernel_release;
    EXPECT_TRUE(says_something) << "a row that changes nothing is not a row";
    // The cache variable of a row is one a bundle may export (runtime_variable.hpp),
    // as the directory or as a vetted flag inside it (PYTENSOR_FLAGS).
    if (!hint.variable.empty()) {
      EXPECT_TRUE(
        std::ranges::any_of(cache_locations(), [&](const VettedVariable& v) { return v.name == hint.variable; }) ||
        std::ranges::any_of(cache_flags(), [&](const VettedFlag& f) { return f.variable == hint.variable; }))
        << hint.variable << " is not a vetted cache location";
    }
  }
}

TEST(AppHint, TinygradsSqliteIndexIsRewrittenOnEveryUse)
{
  // WAL mode: every connection rewrites cache.db-shm, even when nothing compiles.
  EXPECT_TRUE(rewritten_on_every_use("cache.db-shm"));
  EXPECT_FALSE(rewritten_on_every_use("cache.db")) << "the database is the cache";
  EXPECT_FALSE(rewritten_on_every_use("cache.db-wal")) << "the write-ahead log holds entries not yet checkpointed";
  EXPECT_FALSE(rewritten_on_every_use("-shm"));
  // PyTensor touches cutils_ext/__init__.py at every import; a module's own
  // __init__.py is an entry.
  EXPECT_TRUE(rewritten_on_every_use("compiledir_Linux-6.1-x86_64--3.11.7-64/cutils_ext/__init__.py"));
  EXPECT_FALSE(rewritten_on_every_use("compiledir_Linux-6.1-x86_64--3.11.7-64/tmpa1b2c3/__init__.py"));
}

TEST(AppHint, AFileVariableGetsTheDeclarationThatWorks)
{
  EXPECT_NE(names_a_file("CACHEDB").find("XDG_CACHE_HOME"), std::string_view::npos);
  EXPECT_TRUE(names_a_file("XDG_CACHE_HOME").empty());
}

TEST(AppHint, OpenVinoTelemetryIsNotACache)
{
  EXPECT_TRUE(home_dir_not_a_cache("intel"));
  EXPECT_FALSE(home_dir_not_a_cache("hashcat"));
}

TEST(AppHint, ACustomCacheRequiresTheOpenClDeviceOnlyWhenItHoldsCodeForIt)
{
  EXPECT_EQ(custom_cache_device("NUMBA_CACHE_DIR", ""), CacheDevice::none);
  EXPECT_EQ(custom_cache_device("XDG_CACHE_HOME", "tinygrad"), CacheDevice::none);
  EXPECT_EQ(custom_cache_device("TI_OFFLINE_CACHE_FILE_PATH", ""), CacheDevice::none); // no OpenCL backend
  // Code the OpenCL driver built: the OpenCL device, PoCL's on the CPU.
  EXPECT_EQ(custom_cache_device("XDG_CACHE_HOME", "hashcat/kernels"), CacheDevice::opencl_device);
  EXPECT_EQ(custom_cache_device("XDG_CACHE_HOME", "hashcat"), CacheDevice::opencl_device);
  EXPECT_EQ(custom_cache_device("CLFFT_CACHE_PATH", ""), CacheDevice::opencl_device);
  // JAX's and an unknown application's: the device the job ran on, which on
  // the cpu target is the CPU itself, not PoCL.
  EXPECT_EQ(custom_cache_device("JAX_COMPILATION_CACHE_DIR", ""), CacheDevice::job_device);
  EXPECT_EQ(custom_cache_device("XDG_CACHE_HOME", "hashcatter"), CacheDevice::job_device);
  EXPECT_EQ(custom_cache_device("OV_CACHE_DIR", ""), CacheDevice::job_device);
}

TEST(AppHint, KnownMissesAreFoundByKindOrVariable)
{
  const std::vector<std::string> pocl = {"pocl"};
  ASSERT_NE(app_hint_for_kind("pocl", pocl), nullptr);
  EXPECT_NE(app_hint_for_kind("pocl", pocl)->miss_hint.find("PYOPENCL_NO_CACHE=1"), std::string_view::npos);
  ASSERT_NE(app_hint_for_cache("JAX_COMPILATION_CACHE_DIR", ""), nullptr);
  const std::vector<std::string> inductor = {"cuda", "inductor", "triton"};
  ASSERT_NE(app_hint_for_kind("triton", inductor), nullptr);
  EXPECT_NE(app_hint_for_kind("triton", inductor)->miss_hint.find("--capture-root"), std::string_view::npos);
  EXPECT_EQ(app_hint_for_kind("cuda", inductor), nullptr);
}

// A Triton miss beside the dynamo kind is not the inductor kind's known
// case: neither that kind nor --capture-root (which the dynamo kind does not
// need) may be offered as its explanation.
TEST(AppHint, TorchCompileRowsFollowTheSelectedKinds)
{
  const std::vector<std::string> dynamo = {"cuda", "dynamo", "pycache", "triton"};
  for (const auto* kind : {"triton", "dynamo"}) {
    const auto* hint = app_hint_for_kind(kind, dynamo);
    ASSERT_NE(hint, nullptr) << kind;
    EXPECT_EQ(hint->miss_hint.find("inductor kind"), std::string_view::npos) << hint->miss_hint;
    EXPECT_EQ(hint->miss_hint.find("--capture-root"), std::string_view::npos) << hint->miss_hint;
    EXPECT_NE(hint->miss_hint.find("TORCHINDUCTOR_COMPILE_THREADS"), std::string_view::npos) << hint->miss_hint;
  }
  const std::vector<std::string> triton_only = {"triton"};
  EXPECT_EQ(app_hint_for_kind("triton", triton_only), nullptr) << "no torch.compile kind: no torch.compile case";
}

} // namespace
} // namespace prewarm::bundle
