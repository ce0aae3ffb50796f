// SPDX-License-Identifier: Apache-2.0
// The Level Zero path end to end with real numerics, without Intel hardware:
// an AOT programs store made by prewarm/aot with the REAL ocloc, served by the
// runtime's ZeSession through the REAL loader to the test double driver
// (tests/support/ze_test_driver) in its executing mode. The double is still
// not a GPU: it finds the module's bytes in the store, builds the OpenCL C
// source the store's .meta names on the PoCL CPU device and runs THAT; the
// zebin and SPIR-V themselves never execute. What is checked here: the bytes
// the session hands over (native zebin or SPIR-V), kernel names, argument
// order and sizes, group sizes, memory and copies, and the GEMM result
// against a CPU GEMM.
#include "aot_store_fixture.hpp"
#include "aot/ocloc.hpp"
#include "base/embedded_file.hpp"
#include "base/files.hpp"
#include "level_zero/device.hpp"
#include "level_zero/session.hpp"
#include "ze_test_env.hpp"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <level_zero/ze_api.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files();
}

namespace prewarm {
namespace {

namespace fs = std::filesystem;
using level_zero::MemoryKind;
using level_zero::ZeKernelArgs;
using level_zero::ZeSession;

// What the engine builds for an fp32 linear layer at tile 16 (prewarm/engine/gemm.cpp).
constexpr const char* k_gemm_options = "-DTILE=16 -DTRANSPOSE_B=1";
constexpr const char* k_dg2_family = "1270"; // ocloc 22.43's product family note for acm-g11

// C = alpha * A * B^T (+ R), A m x k, B n x k, row major, computed on the CPU.
std::vector<float>
cpu_gemm(int m, int n, int k, const std::vector<float>& a, const std::vector<float>& b, float alpha,
         const std::vector<float>* residual)
{
  std::vector<float> c(static_cast<std::size_t>(m) * n);
  for (int row = 0; row < m; ++row) {
    for (int col = 0; col < n; ++col) {
      double acc = 0;
      for (int i = 0; i < k; ++i) {
        acc += static_cast<double>(a[row * k + i]) * b[col * k + i];
      }
      double value = alpha * acc;
      if (residual != nullptr) {
        value += (*residual)[row * n + col];
      }
      c[row * n + col] = static_cast<float>(value);
    }
  }
  return c;
}

std::vector<float>
pattern(std::size_t count, int multiplier, int modulus)
{
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    values[i] = static_cast<float>((static_cast<int>(i) * multiplier) % modulus - modulus / 2) * 0.25f;
  }
  return values;
}

class ZeExecutionTest : public ::testing::Test
{
protected:
  static void SetUpTestSuite()
  {
    const aot::AotTargetSpec targets[] = {prewarm::testing::k_arc_a380};
    const std::vector<aot::KernelVariant> variants = {{"gemm.cl", k_gemm_options}};
    s_store.emplace(prewarm::testing::SuiteAotStore::build("test_only_ze_execution-", targets, variants,
                                                           kernels::embedded_files(), 1));
    if (s_store->skip_reason().empty()) {
      level_zero::testing::use_executing_test_driver(fs::path(PREWARM_SOURCE_DIR) / "kernels", programs());
    }
  }
  static void TearDownTestSuite() { s_store.reset(); }

  void SetUp() override
  {
    if (!s_store->skip_reason().empty()) {
      GTEST_SKIP() << s_store->skip_reason();
    }
    // Each test starts from the suite's settings, whatever the last one changed.
    ::setenv("PREWARM_ZE_TEST_EXECUTE_SOURCES", (fs::path(PREWARM_SOURCE_DIR) / "kernels").c_str(), 1);
    ::setenv("PREWARM_ZE_TEST_EXECUTE_PROGRAMS", programs().c_str(), 1);
    ::unsetenv("PREWARM_ZE_TEST_FP16");
    ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56a5", 1);
    ::setenv("PREWARM_ZE_TEST_PRODUCT_FAMILY", k_dg2_family, 1);
    // The driver version equal to the store's compiler: the NATIVE zebin is served.
    ::setenv("PREWARM_ZE_TEST_DRIVER_VERSION", s_store->compiler().c_str(), 1);
  }

  static fs::path programs() { return s_store->programs(); }

  static level_zero::ZeProgramSource gemm_program(const char* options = k_gemm_options)
  {
    level_zero::ZeProgramSource p;
    p.source_name = "gemm.cl";
    p.source = *find_embedded(kernels::embedded_files(), "gemm.cl");
    p.options = options;
    return p; // no SPIR-V of its own: the store's is the fallback
  }

  static Result<ZeSession> open_session(const fs::path& aot_programs)
  {
    level_zero::ZeSessionOptions options;
    options.device_selector = "0";
    options.aot_programs = aot_programs;
    return ZeSession::open(options);
  }

  struct Gemm
  {
    int m, n, k;
    float alpha;
    void* a;
    void* b;
    void* c;
    void* r;
    int use_residual;
    ZeKernelArgs args() const
    {
      // gemm.cl's 19 arguments, in order (as session_test.cpp passes them).
      return ZeKernelArgs()
        .value(m).value(n).value(k)
        .pointer(a).value(0).value(k).value(0)
        .pointer(b).value(0).value(k).value(0).value(1)
        .pointer(c).value(0).value(n).value(0)
        .value(alpha)
        .pointer(r).value(use_residual);
    }
  };

  // Two GEMMs through one kernel before one submission: the second launch's
  // arguments must not leak into the first (Level Zero captures arguments at
  // append). Checked against the CPU; returns through gtest assertions.
  static void run_two_gemms_and_check(ZeSession& session, ze_kernel_handle_t kernel)
  {
    const int m = 48, n = 32, k = 40; // m, n multiples of TILE; k is not
    const auto a = pattern(static_cast<std::size_t>(m) * k, 7, 13);
    const auto b = pattern(static_cast<std::size_t>(n) * k, 5, 11);
    const auto residual = pattern(static_cast<std::size_t>(m) * n, 3, 7);
    const std::size_t c_bytes = static_cast<std::size_t>(m) * n * sizeof(float);
    auto da = session.allocate(a.size() * sizeof(float), MemoryKind::device);
    auto db = session.allocate(b.size() * sizeof(float), MemoryKind::device);
    auto dr = session.allocate(c_bytes, MemoryKind::device);
    auto dc1 = session.allocate(c_bytes, MemoryKind::device);
    auto dc2 = session.allocate(c_bytes, MemoryKind::shared);
    ASSERT_TRUE(da && db && dr && dc1 && dc2);
    ASSERT_TRUE(session.copy(*da, a.data(), a.size() * sizeof(float)));
    ASSERT_TRUE(session.copy(*db, b.data(), b.size() * sizeof(float)));
    ASSERT_TRUE(session.copy(*dr, residual.data(), c_bytes));
    const Gemm first{m, n, k, 1.0f, *da, *db, *dc1, *dc1, 0};
    const Gemm second{m, n, k, 0.5f, *da, *db, *dc2, *dr, 1};
    const level_zero::Dim3 groups{static_cast<uint32_t>(n / 16), static_cast<uint32_t>(m / 16), 1};
    ASSERT_TRUE(session.launch(kernel, groups, {16, 16, 1}, first.args()));
    ASSERT_TRUE(session.launch(kernel, groups, {16, 16, 1}, second.args()));
    std::vector<float> c1(static_cast<std::size_t>(m) * n, -1.0f), c2(c1.size(), -1.0f);
    ASSERT_TRUE(session.copy(c1.data(), *dc1, c_bytes));
    ASSERT_TRUE(session.copy(c2.data(), *dc2, c_bytes));
    auto finished = session.finish();
    ASSERT_TRUE(finished) << finished.error().message();

    const auto expected1 = cpu_gemm(m, n, k, a, b, 1.0f, nullptr);
    const auto expected2 = cpu_gemm(m, n, k, a, b, 0.5f, &residual);
    for (std::size_t i = 0; i < c1.size(); ++i) {
      ASSERT_NEAR(c1[i], expected1[i], 1e-3f * (1.0f + std::fabs(expected1[i]))) << "first GEMM, element " << i;
      ASSERT_NEAR(c2[i], expected2[i], 1e-3f * (1.0f + std::fabs(expected2[i]))) << "second GEMM, element " << i;
    }
  }

  static inline std::optional<prewarm::testing::SuiteAotStore> s_store;
};

TEST_F(ZeExecutionTest, NativeZebinPathRunsGemmAndMatchesTheCpu)
{
  level_zero::testing::CallLog log;
  auto session = open_session(programs());
  ASSERT_TRUE(session) << session.error().message();
  auto kernel = session->kernel(gemm_program(), "gemm");
  ASSERT_TRUE(kernel) << kernel.error().message();
  EXPECT_EQ(session->stats().native_modules, 1u);
  EXPECT_EQ(session->stats().spirv_modules, 0u);
  EXPECT_TRUE(session->stats().fallbacks.empty());

  run_two_gemms_and_check(*session, *kernel);

  const auto text = log.text();
  EXPECT_NE(text.find("format=native"), std::string::npos) << text;
  EXPECT_NE(text.find("result=accepted kernels=gemm execute=yes source=\"gemm.cl\""), std::string::npos) << text;
  EXPECT_NE(text.find("launch kernel=gemm groups=2,3,1 group-size=16,16,1 args=19 list=regular executed=yes"),
            std::string::npos)
    << text;
  EXPECT_EQ(text.find("executed=no"), std::string::npos) << text;
}

TEST_F(ZeExecutionTest, SpirvPathRunsGemmAndMatchesTheCpu)
{
  ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56a0", 1); // an A770: no target in this store
  level_zero::testing::CallLog log;
  auto session = open_session(programs());
  ASSERT_TRUE(session) << session.error().message();
  auto kernel = session->kernel(gemm_program(), "gemm");
  ASSERT_TRUE(kernel) << kernel.error().message();
  EXPECT_EQ(session->stats().native_modules, 0u);
  EXPECT_EQ(session->stats().spirv_modules, 1u);

  run_two_gemms_and_check(*session, *kernel);

  const auto text = log.text();
  EXPECT_NE(text.find("format=spirv"), std::string::npos) << text;
  EXPECT_EQ(text.find("format=native"), std::string::npos) << text;
  EXPECT_NE(text.find("executed=yes"), std::string::npos) << text;
}

TEST_F(ZeExecutionTest, ImmediateListRunsAtAppend)
{
  level_zero::testing::CallLog log;
  auto session = open_session(programs());
  ASSERT_TRUE(session) << session.error().message();
  auto kernel = session->kernel(gemm_program(), "gemm");
  ASSERT_TRUE(kernel) << kernel.error().message();
  const int n = 16;
  const auto a = pattern(n * n, 7, 13), b = pattern(n * n, 5, 11);
  auto da = session->allocate(a.size() * sizeof(float), MemoryKind::shared);
  auto db = session->allocate(b.size() * sizeof(float), MemoryKind::shared);
  auto dc = session->allocate(a.size() * sizeof(float), MemoryKind::shared);
  ASSERT_TRUE(da && db && dc);
  std::memcpy(*da, a.data(), a.size() * sizeof(float));
  std::memcpy(*db, b.data(), b.size() * sizeof(float));

  ze_command_queue_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  desc.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  ze_command_list_handle_t list = nullptr;
  ASSERT_EQ(zeCommandListCreateImmediate(session->context(), session->device().device, &desc, &list),
            ZE_RESULT_SUCCESS);
  const Gemm gemm{n, n, n, 1.0f, *da, *db, *dc, *dc, 0};
  const auto args = gemm.args().args();
  ASSERT_EQ(zeKernelSetGroupSize(*kernel, 16, 16, 1), ZE_RESULT_SUCCESS);
  for (uint32_t i = 0; i < args.size(); ++i) {
    ASSERT_EQ(zeKernelSetArgumentValue(*kernel, i, args[i].size(), args[i].data()), ZE_RESULT_SUCCESS) << i;
  }
  ze_group_count_t groups{1, 1, 1};
  EXPECT_EQ(zeCommandListAppendLaunchKernel(list, *kernel, &groups, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeCommandListDestroy(list), ZE_RESULT_SUCCESS);

  // Done when the append returned: no queue, no fence.
  const auto expected = cpu_gemm(n, n, n, a, b, 1.0f, nullptr);
  const auto* c = static_cast<const float*>(*dc);
  for (int i = 0; i < n * n; ++i) {
    ASSERT_NEAR(c[i], expected[i], 1e-3f * (1.0f + std::fabs(expected[i]))) << i;
  }
  EXPECT_NE(log.text().find("list=immediate executed=yes"), std::string::npos) << log.text();
}

TEST_F(ZeExecutionTest, ModuleBytesNotInTheStoreFailWithTheReason)
{
  // Real SPIR-V of the same source, but with options nobody compiled ahead of
  // time: the double has no source for these bytes and says so.
  aot::OclocCompileRequest request;
  request.source_name = "gemm.cl";
  request.source = gemm_program().source; // a view of the embedded file
  request.options = "-DTILE=8 -DTRANSPOSE_B=1";
  request.device = "acm-g11";
  auto spirv = s_store->ocloc().compile_spirv(request);
  ASSERT_TRUE(spirv) << spirv.error().message();
  auto program = gemm_program("-DTILE=8 -DTRANSPOSE_B=1");
  program.spirv = *spirv;

  level_zero::testing::CallLog log;
  auto session = open_session({}); // SPIR-V only
  ASSERT_TRUE(session) << session.error().message();
  auto kernel = session->kernel(program, "gemm");
  ASSERT_FALSE(kernel);
  const auto message = kernel.error().message();
  EXPECT_NE(message.find("ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"), std::string::npos) << message;
  const std::string reason = "test double cannot execute: module bytes not in " + (programs() / "aot").string();
  EXPECT_NE(log.text().find("result=rejected reason=\"" + reason), std::string::npos) << log.text();
  if (!level_zero::loader_wraps_handles()) { // the session reads the build log only then
    EXPECT_NE(message.find(reason), std::string::npos) << message;
  }
}

TEST_F(ZeExecutionTest, SourceMissingFromTheSourcesDirectoryFailsWithTheReason)
{
  auto empty = TempDir::create("test_only_no_sources-");
  ASSERT_TRUE(empty);
  ::setenv("PREWARM_ZE_TEST_EXECUTE_SOURCES", empty->path().c_str(), 1);
  level_zero::testing::CallLog log;
  auto session = open_session(programs());
  ASSERT_TRUE(session) << session.error().message();
  auto kernel = session->kernel(gemm_program(), "gemm");
  ASSERT_FALSE(kernel);
  const auto message = kernel.error().message();
  // The zebin is found but has no source; the SPIR-V fallback fails the same way.
  const std::string reason = "no file in " + empty->path().string() + " has source-sha256";
  EXPECT_NE(log.text().find("format=native"), std::string::npos) << log.text();
  EXPECT_NE(log.text().find(reason), std::string::npos) << log.text();
  if (!level_zero::loader_wraps_handles()) {
    EXPECT_NE(message.find(reason), std::string::npos) << message;
  }
}

TEST_F(ZeExecutionTest, ArgumentIndexAndSizeAreChecked)
{
  level_zero::testing::CallLog log;
  auto session = open_session(programs());
  ASSERT_TRUE(session) << session.error().message();
  auto kernel = session->kernel(gemm_program(), "gemm");
  ASSERT_TRUE(kernel) << kernel.error().message();
  auto a = session->allocate(16 * 16 * sizeof(float), MemoryKind::device);
  ASSERT_TRUE(a);
  const Gemm gemm{16, 16, 16, 1.0f, *a, *a, *a, *a, 0};

  auto extra = gemm.args().value(7); // a 20th argument: gemm has 19
  auto launched = session->launch(*kernel, {1, 1, 1}, {16, 16, 1}, extra);
  ASSERT_FALSE(launched);
  EXPECT_NE(launched.error().message().find("ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX"), std::string::npos)
    << launched.error().message();

  const int64_t wide_m = 16; // M is an int: 8 bytes is the wrong size
  auto wrong_size = ZeKernelArgs().value(wide_m);
  launched = session->launch(*kernel, {1, 1, 1}, {16, 16, 1}, wrong_size);
  ASSERT_FALSE(launched);
  EXPECT_NE(launched.error().message().find("ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE"), std::string::npos)
    << launched.error().message();

  // A pointer argument that is not memory of the double cannot be executed.
  float host = 0.0f;
  Gemm stray = gemm;
  stray.c = &host;
  launched = session->launch(*kernel, {1, 1, 1}, {16, 16, 1}, stray.args());
  ASSERT_FALSE(launched);
  EXPECT_NE(log.text().find("is not the base of a live allocation"), std::string::npos) << log.text();
}

TEST_F(ZeExecutionTest, WrongGroupSizeFailsTheSubmissionNamingTheKernel)
{
  level_zero::testing::CallLog log;
  auto session = open_session(programs());
  ASSERT_TRUE(session) << session.error().message();
  auto kernel = session->kernel(gemm_program(), "gemm");
  ASSERT_TRUE(kernel) << kernel.error().message();
  auto a = session->allocate(16 * 16 * sizeof(float), MemoryKind::device);
  ASSERT_TRUE(a);
  const Gemm gemm{16, 16, 16, 1.0f, *a, *a, *a, *a, 0};
  // gemm.cl requires TILE x TILE x 1 work-groups.
  ASSERT_TRUE(session->launch(*kernel, {2, 2, 1}, {8, 8, 1}, gemm.args()));
  auto finished = session->finish();
  ASSERT_FALSE(finished);
  EXPECT_NE(finished.error().message().find("ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION"), std::string::npos)
    << finished.error().message();
  const auto text = log.text();
  EXPECT_NE(text.find("launch kernel=gemm groups=2,2,1 group-size=8,8,1 args=19 list=regular executed=no "
                      "error=\"clEnqueueNDRangeKernel(gemm): CL_INVALID_WORK_GROUP_SIZE"),
            std::string::npos)
    << text;
}

TEST_F(ZeExecutionTest, ModulePropertiesFollowThePoclDevice)
{
  auto session = open_session(programs());
  ASSERT_TRUE(session) << session.error().message();
  ze_device_module_properties_t properties{};
  properties.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  ASSERT_EQ(zeDeviceGetModuleProperties(session->device().device, &properties), ZE_RESULT_SUCCESS);

  // What the OpenCL device itself says, asked directly.
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  ASSERT_EQ(clGetPlatformIDs(1, &platform, nullptr), CL_SUCCESS);
  ASSERT_EQ(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), CL_SUCCESS);
  std::size_t size = 0;
  ASSERT_EQ(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &size), CL_SUCCESS);
  std::string extensions(size, '\0');
  ASSERT_EQ(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr), CL_SUCCESS);
  extensions = " " + std::string(extensions.c_str()) + " ";
  EXPECT_EQ((properties.flags & ZE_DEVICE_MODULE_FLAG_FP16) != 0,
            extensions.find(" cl_khr_fp16 ") != std::string::npos)
    << extensions;
  EXPECT_EQ((properties.flags & ZE_DEVICE_MODULE_FLAG_FP64) != 0,
            extensions.find(" cl_khr_fp64 ") != std::string::npos)
    << extensions;
  EXPECT_GE(properties.maxArgumentsSize, 256u);

  ze_device_compute_properties_t compute{};
  compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  ASSERT_EQ(zeDeviceGetComputeProperties(session->device().device, &compute), ZE_RESULT_SUCCESS);
  EXPECT_GE(compute.maxTotalGroupSize, 256u); // the engine's 16 x 16 groups
  EXPECT_GE(compute.maxGroupSizeX, 16u);
  EXPECT_GE(compute.maxGroupSizeY, 16u);

  // Not executing: FP16 only on request.
  ::unsetenv("PREWARM_ZE_TEST_EXECUTE_PROGRAMS");
  ze_device_module_properties_t recording{};
  recording.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  ASSERT_EQ(zeDeviceGetModuleProperties(session->device().device, &recording), ZE_RESULT_SUCCESS);
  EXPECT_EQ(recording.flags & ZE_DEVICE_MODULE_FLAG_FP16, 0u);
  ::setenv("PREWARM_ZE_TEST_FP16", "1", 1);
  ASSERT_EQ(zeDeviceGetModuleProperties(session->device().device, &recording), ZE_RESULT_SUCCESS);
  EXPECT_NE(recording.flags & ZE_DEVICE_MODULE_FLAG_FP16, 0u);
}

} // namespace
} // namespace prewarm
