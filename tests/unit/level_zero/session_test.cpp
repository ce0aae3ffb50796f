// SPDX-License-Identifier: Apache-2.0
// The Level Zero session over the REAL loader and the test double (not a GPU):
// the engine's gemm / softmax / rmsnorm kernels as SPIR-V made by the REAL
// ocloc (-spv_only), kernel creation by name, arguments, launches on a regular
// command list with a fence. The double records launches and executes no
// kernel code, so these tests check the API sequence, not numerics.
#include "level_zero/session.hpp"

#include "aot/ocloc.hpp"
#include "base/embedded_file.hpp"
#include "ze_test_env.hpp"

#include <gtest/gtest.h>

#include <span>
#include <vector>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files(); // prewarm_kernels
}

namespace prewarm::level_zero {
namespace {

class ZeSessionTest : public ::testing::Test
{
protected:
  static void SetUpTestSuite() { testing::use_test_driver(); }
  void SetUp() override
  {
    auto ocloc = aot::Ocloc::locate();
    if (!ocloc) {
      GTEST_SKIP() << "needs ocloc for SPIR-V: " << ocloc.error().message();
    }
    m_ocloc.emplace(std::move(*ocloc));
  }

  struct Program
  {
    std::string source;
    std::string options;
    std::string spirv;
    ZeProgramSource view(std::string name) const
    {
      ZeProgramSource p;
      p.source_name = std::move(name);
      p.source = source;
      p.options = options;
      p.spirv = spirv;
      return p;
    }
  };

  Program spirv_of(std::string_view file, std::string options)
  {
    auto source = find_embedded(kernels::embedded_files(), file);
    EXPECT_TRUE(source) << file << " is not embedded";
    Program program{std::string(source.value_or("")), std::move(options), {}};
    aot::OclocCompileRequest request;
    request.source_name = std::string(file);
    request.source = program.source;
    request.options = program.options;
    request.device = "acm-g11";
    auto spirv = m_ocloc->compile_spirv(request);
    EXPECT_TRUE(spirv) << (spirv ? "" : spirv.error().message());
    program.spirv = spirv.value_or("");
    return program;
  }

  std::optional<aot::Ocloc> m_ocloc;
};

TEST_F(ZeSessionTest, DeviceMustBeNamed)
{
  auto session = ZeSession::open({});
  ASSERT_FALSE(session);
  EXPECT_EQ(session.error().category(), Errc::usage);
}

TEST_F(ZeSessionTest, RunsGemmSoftmaxRmsnormFromSpirv)
{
  testing::CallLog log;
  ZeSessionOptions options;
  options.device_selector = "0";
  auto session = ZeSession::open(options);
  ASSERT_TRUE(session) << session.error().message();

  const auto gemm = spirv_of("gemm.cl", "-DTILE=16");
  const auto softmax = spirv_of("softmax.cl", "-DWG=64");
  const auto rmsnorm = spirv_of("rmsnorm.cl", "-DWG=64");
  auto k_gemm = session->kernel(gemm.view("gemm.cl"), "gemm");
  auto k_softmax = session->kernel(softmax.view("softmax.cl"), "softmax_rows");
  auto k_rmsnorm = session->kernel(rmsnorm.view("rmsnorm.cl"), "rmsnorm");
  ASSERT_TRUE(k_gemm) << k_gemm.error().message();
  ASSERT_TRUE(k_softmax) << k_softmax.error().message();
  ASSERT_TRUE(k_rmsnorm) << k_rmsnorm.error().message();
  auto again = session->kernel(gemm.view("gemm.cl"), "gemm");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *k_gemm); // cached per program and name

  const int m = 32, n = 32, k = 32;
  std::vector<float> host(m * k, 1.5f);
  auto a = session->allocate(host.size() * sizeof(float), MemoryKind::device);
  auto b = session->allocate(host.size() * sizeof(float), MemoryKind::device);
  auto c = session->allocate(host.size() * sizeof(float), MemoryKind::shared);
  ASSERT_TRUE(a && b && c);
  ASSERT_TRUE(session->copy(*a, host.data(), host.size() * sizeof(float)));
  ASSERT_TRUE(session->copy(*b, host.data(), host.size() * sizeof(float)));
  auto gemm_args = ZeKernelArgs()
                     .value(m).value(n).value(k)
                     .pointer(*a).value(0).value(k).value(0)
                     .pointer(*b).value(0).value(k).value(0).value(1)
                     .pointer(*c).value(0).value(n).value(0)
                     .value(1.0f)
                     .pointer(*c).value(0);
  ASSERT_EQ(gemm_args.args().size(), 19u);
  ASSERT_TRUE(session->launch(*k_gemm, {n / 16, m / 16, 1}, {16, 16, 1}, gemm_args));
  ASSERT_TRUE(session->launch(*k_softmax, {static_cast<uint32_t>(m), 1, 1}, {64, 1, 1},
                              ZeKernelArgs().pointer(*c).value(m).value(n).value(0.125f).value(1).value(n)));
  ASSERT_TRUE(session->launch(*k_rmsnorm, {static_cast<uint32_t>(m), 1, 1}, {64, 1, 1},
                              ZeKernelArgs().pointer(*c).pointer(*a).pointer(*b).value(m).value(n).value(1e-6f)));
  std::vector<float> back(host.size(), 0.0f);
  ASSERT_TRUE(session->copy(back.data(), *a, back.size() * sizeof(float)));

  // Nothing is submitted before finish(): the list is a regular one.
  EXPECT_EQ(log.text().find("launch kernel="), std::string::npos);
  ASSERT_TRUE(session->finish());
  EXPECT_EQ(back, host); // copies are real memcpy in the double

  const auto text = log.text();
  EXPECT_NE(text.find("launch kernel=gemm groups=2,2,1 group-size=16,16,1 args=19 list=regular"), std::string::npos)
    << text;
  EXPECT_NE(text.find("launch kernel=softmax_rows groups=32,1,1 group-size=64,1,1 args=6"), std::string::npos);
  EXPECT_NE(text.find("launch kernel=rmsnorm groups=32,1,1 group-size=64,1,1 args=6"), std::string::npos);
  EXPECT_EQ(session->stats().launches, 3u);
  EXPECT_EQ(session->stats().spirv_modules, 3u);
  EXPECT_EQ(session->stats().native_modules, 0u);
  EXPECT_EQ(session->stats().variants.size(), 3u);

  // The session can be used again after finish().
  ASSERT_TRUE(session->launch(*k_gemm, {1, 1, 1}, {16, 16, 1}, gemm_args));
  ASSERT_TRUE(session->finish());
  EXPECT_TRUE(session->free(*a));
  EXPECT_FALSE(session->free(*a)); // not twice
}

TEST_F(ZeSessionTest, UnknownKernelNameIsAnError)
{
  ZeSessionOptions options;
  options.device_selector = "0";
  auto session = ZeSession::open(options);
  ASSERT_TRUE(session);
  const auto softmax = spirv_of("softmax.cl", "");
  auto kernel = session->kernel(softmax.view("softmax.cl"), "test_only_missing");
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.error().message().find("ZE_RESULT_ERROR_INVALID_KERNEL_NAME"), std::string::npos)
    << kernel.error().message();
}

} // namespace
} // namespace prewarm::level_zero
