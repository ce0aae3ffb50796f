// SPDX-License-Identifier: Apache-2.0
// Session on the real OpenCL device (PoCL here).
#include "base/files.hpp"
#include "engine/session.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace prewarm::engine {
namespace {

#define OPEN_SESSION(name_, ...)                                                         \
  auto name_##_result = Session::open(__VA_ARGS__);                                      \
  if (!name_##_result) {                                                                 \
    GTEST_SKIP() << "no OpenCL device: " << name_##_result.error().message();            \
  }                                                                                      \
  Session& name_ = *name_##_result

TEST(Session, KernelsAreCachedPerSourceOptionsAndName)
{
  OPEN_SESSION(session, SessionOptions{});
  auto a = session.kernel("rmsnorm.cl", "rmsnorm", Defines().set("WG", 32));
  ASSERT_TRUE(a) << a.error().message();
  auto b = session.kernel("rmsnorm.cl", "rmsnorm", Defines().set("WG", 32));
  ASSERT_TRUE(b);
  EXPECT_EQ(*a, *b);
  auto c = session.kernel("rmsnorm.cl", "rmsnorm", Defines().set("WG", 64));
  ASSERT_TRUE(c);
  EXPECT_NE(*a, *c);
  EXPECT_GT(session.stats().compile_seconds, 0.0);
}

TEST(Session, UnknownSourceAndKernelAreErrors)
{
  OPEN_SESSION(session, SessionOptions{});
  auto missing = session.kernel("no_such_file.cl", "k");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("no_such_file.cl"), std::string::npos);
  auto wrong_name = session.kernel("rmsnorm.cl", "no_such_kernel");
  ASSERT_FALSE(wrong_name);
  EXPECT_NE(wrong_name.error().message().find("CL_INVALID_KERNEL_NAME"), std::string::npos) << wrong_name.error().message();
}

TEST(Session, BadDefineFailsWithTheBuildLog)
{
  OPEN_SESSION(session, SessionOptions{});
  auto kernel = session.kernel("gemm.cl", "gemm", Defines().set("TILE", "not_a_number"));
  ASSERT_FALSE(kernel);
  EXPECT_EQ(kernel.error().code(), "E_OPENCL_BUILD");
  EXPECT_NE(kernel.error().message().find("gemm.cl:gemm [-DTILE=not_a_number]"), std::string::npos)
    << kernel.error().message();
  EXPECT_NE(kernel.error().message().find("not_a_number"), std::string::npos);
}

TEST(Session, WriteReadRoundTripAndPeakMemory)
{
  OPEN_SESSION(session, SessionOptions{});
  std::vector<float> host{1.5f, -2.0f, 3.25f, 0.0f};
  {
    auto a = session.allocate(1000);
    ASSERT_TRUE(a);
    auto b = session.allocate(host.size() * sizeof(float));
    ASSERT_TRUE(b);
    ASSERT_TRUE(session.write(*b, std::span<const float>(host)));
    std::vector<float> back(host.size());
    ASSERT_TRUE(session.read(*b, std::span<float>(back)));
    EXPECT_EQ(back, host);
    EXPECT_EQ(session.stats().peak_device_bytes, 1000 + host.size() * sizeof(float));
    std::vector<float> too_big(1000);
    EXPECT_FALSE(session.write(*b, std::span<const float>(too_big)));
  }
  // Freed buffers do not count; the peak stays.
  auto c = session.allocate(10);
  ASSERT_TRUE(c);
  EXPECT_EQ(session.stats().peak_device_bytes, 1000 + host.size() * sizeof(float));
}

TEST(Session, EachDistinctKernelDefinesAndLocalSizeIsOneVariant)
{
  OPEN_SESSION(session, SessionOptions{});
  auto x = session.allocate(4 * 64 * sizeof(float));
  auto w = session.allocate(64 * sizeof(float));
  auto y = session.allocate(4 * 64 * sizeof(float));
  ASSERT_TRUE(x && w && y);
  std::vector<float> ones(4 * 64, 1.0f);
  ASSERT_TRUE(session.write(*x, std::span<const float>(ones)));
  ASSERT_TRUE(session.write(*w, std::span<const float>(ones).first(64)));
  for (int wg : {32, 32, 64}) {
    auto kernel = session.kernel("rmsnorm.cl", "rmsnorm", Defines().set("WG", wg));
    ASSERT_TRUE(kernel);
    KernelArgs args;
    args.buffer(*x).buffer(*w).buffer(*y).value(cl_int{4}).value(cl_int{64}).value(cl_float{1e-6f});
    ASSERT_TRUE(session.launch(*kernel, LaunchGeometry::linear(4 * static_cast<std::size_t>(wg), static_cast<std::size_t>(wg)), args));
  }
  ASSERT_TRUE(session.finish());
  EXPECT_EQ(session.stats().launches, 3u);
  ASSERT_EQ(session.stats().variants.size(), 2u);
  EXPECT_EQ(session.stats().variants[0], "rmsnorm.cl:rmsnorm [-DWG=32] local=32");
  EXPECT_EQ(session.stats().variants[1], "rmsnorm.cl:rmsnorm [-DWG=64] local=64");
}

TEST(Session, GlobalNotAMultipleOfLocalIsRefusedBeforeEnqueue)
{
  OPEN_SESSION(session, SessionOptions{});
  auto kernel = session.kernel("rmsnorm.cl", "rmsnorm", Defines().set("WG", 32));
  ASSERT_TRUE(kernel);
  auto status = session.launch(*kernel, LaunchGeometry::linear(100, 32), KernelArgs());
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("not a multiple"), std::string::npos) << status.error().message();
}

TEST(Session, ProgramsGoThroughTheStoreAndAreCapturedAfterLaunches)
{
  auto scratch = TempDir::create("prewarm-session-test-");
  ASSERT_TRUE(scratch);
  const auto store_dir = scratch->path() / "store";
  {
    OPEN_SESSION(session, SessionOptions{"", store_dir, store::StoreMode::read_write});
    auto kernel = session.kernel("rmsnorm.cl", "rmsnorm", Defines().set("WG", 16));
    ASSERT_TRUE(kernel);
    EXPECT_EQ(session.stats().store.misses, 1u);
    ASSERT_TRUE(session.capture_programs());
    EXPECT_EQ(session.stats().store.captured, 1u);
  }
  {
    OPEN_SESSION(session, SessionOptions{"", store_dir, store::StoreMode::read_only});
    auto kernel = session.kernel("rmsnorm.cl", "rmsnorm", Defines().set("WG", 16));
    ASSERT_TRUE(kernel);
    EXPECT_EQ(session.stats().store.hits, 1u);
    EXPECT_EQ(session.stats().store.misses, 0u);
  }
}

TEST(Session, NoMatchingDeviceIsAnErrorNotAFallback)
{
  auto session = Session::open(SessionOptions{"no-such-device-q9", {}, store::StoreMode::read_only});
  ASSERT_FALSE(session);
  EXPECT_TRUE(session.error().code() == "E_NO_SUCH_DEVICE" || session.error().code() == "E_NO_OPENCL")
    << session.error().message();
}

TEST(Backend, NamesRoundTripAndOthersAreUsageErrors)
{
  for (const auto backend : {Backend::opencl, Backend::level_zero}) {
    auto parsed = parse_backend(to_string(backend));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, backend);
  }
  auto cuda = parse_backend("cuda");
  ASSERT_FALSE(cuda);
  EXPECT_EQ(cuda.error().category(), Errc::usage);
  EXPECT_NE(cuda.error().message().find("\"cuda\""), std::string::npos) << cuda.error().message();
}

} // namespace
} // namespace prewarm::engine
