// SPDX-License-Identifier: Apache-2.0
// gemm.cl, softmax.cl and rmsnorm.cl on the real OpenCL device against their
// CPU references, at sizes that are not multiples of the tile/work-group.
#include "engine/gemm.hpp"
#include "engine/row_kernels.hpp"
#include "engine/seeded_random.hpp"
#include "engine/session.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace prewarm::engine {
namespace {

class KernelTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto opened = Session::open({});
    if (!opened) {
      GTEST_SKIP() << "no OpenCL device: " << opened.error().message();
    }
    session.emplace(std::move(*opened));
    seed = std::random_device{}();
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  }

  std::vector<float> random_values(std::size_t count, float scale = 1.0f) { return random.uniform(count, scale); }

  DeviceBuffer upload(const std::vector<float>& values)
  {
    auto buffer = session->allocate(values.size() * sizeof(float));
    EXPECT_TRUE(buffer);
    EXPECT_TRUE(session->write(*buffer, std::span<const float>(values)));
    return std::move(*buffer);
  }

  std::vector<float> download(const DeviceBuffer& buffer, std::size_t count)
  {
    std::vector<float> values(count);
    EXPECT_TRUE(session->read(buffer, std::span<float>(values)));
    return values;
  }

  static void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tolerance)
  {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], tolerance * (1.0 + std::fabs(want[i]))) << "element " << i;
    }
  }

  std::optional<Session> session;
  std::uint64_t seed = 0;
  SeededRandom random{static_cast<std::uint64_t>(std::random_device{}())};
};

TEST_F(KernelTest, GemmTransposedBWithResidualAtOddSizes)
{
  const int m = 19, n = 37, k = 45;
  auto a = random_values(static_cast<std::size_t>(m * k));
  auto b = random_values(static_cast<std::size_t>(n * k));
  auto r = random_values(static_cast<std::size_t>(m * n));
  auto da = upload(a), db = upload(b), dr = upload(r);
  auto dc = session->allocate(static_cast<std::size_t>(m * n) * sizeof(float));
  ASSERT_TRUE(dc);
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {&da, 0, k, 0};
  args.b = {&db, 0, k, 0};
  args.c = {&*dc, 0, n, 0};
  args.residual = &dr;
  args.alpha = 0.5f;
  for (int tile : {8, 16}) {
    ASSERT_TRUE(run_gemm(*session, args, {}, tile));
    std::vector<float> want(static_cast<std::size_t>(m * n));
    reference_gemm(args, a.data(), b.data(), want.data(), r.data());
    expect_close(download(*dc, want.size()), want, 1e-5);
  }
}

TEST_F(KernelTest, GemmBatchedGroupedPlainBWithOffsets)
{
  // Attention's P V: 6 query heads over 2 KV heads, B stored K x N with a row
  // stride wider than N, C written at an offset into a wider matrix.
  const int heads = 6, group = 3, m = 5, kv_rows = 11, head_dim = 7;
  const int kv_dim = 2 * head_dim, q_dim = heads * head_dim, offset_rows = 2;
  auto p = random_values(static_cast<std::size_t>(heads * m * kv_rows));
  auto v = random_values(static_cast<std::size_t>(kv_rows * kv_dim));
  std::vector<float> c_init((offset_rows + m) * static_cast<std::size_t>(q_dim), 0.0f);
  auto dp = upload(p), dv = upload(v), dc = upload(c_init);
  GemmArgs args;
  args.batches = heads;
  args.m = m;
  args.n = head_dim;
  args.k = kv_rows;
  args.a = {&dp, 0, kv_rows, m * kv_rows};
  args.b = {&dv, 0, kv_dim, head_dim};
  args.b_batch_group = group;
  args.b_layout = BLayout::plain;
  args.c = {&dc, offset_rows * q_dim, q_dim, head_dim};
  ASSERT_TRUE(run_gemm(*session, args));
  auto want = c_init;
  reference_gemm(args, p.data(), v.data(), want.data(), nullptr);
  expect_close(download(dc, want.size()), want, 1e-5);
  // The rows before the offset are untouched.
  const auto got = download(dc, want.size());
  for (int i = 0; i < offset_rows * q_dim; ++i) {
    ASSERT_EQ(got[static_cast<std::size_t>(i)], 0.0f);
  }
}

TEST_F(KernelTest, SoftmaxCausalAndPlain)
{
  for (auto mask : {CausalMask::none, CausalMask::causal}) {
    const int heads = 3, period = 5, cols = 9; // 4 cached keys + 5 queries
    auto x = random_values(static_cast<std::size_t>(heads * period * cols), 4.0f);
    auto dx = upload(x);
    SoftmaxArgs args{&dx, heads * period, cols, 0.7f, mask, period};
    ASSERT_TRUE(run_softmax(*session, args, {}, 32));
    auto want = x;
    reference_softmax(args, want.data());
    const auto got = download(dx, want.size());
    expect_close(got, want, 1e-5);
    for (int r = 0; r < heads * period; ++r) {
      double sum = 0;
      for (int c = 0; c < cols; ++c) {
        sum += got[static_cast<std::size_t>(r * cols + c)];
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
      if (mask == CausalMask::causal) {
        EXPECT_EQ(got[static_cast<std::size_t>(r * cols + cols - 1)] == 0.0f, r % period != period - 1) << r;
      }
    }
  }
}

TEST_F(KernelTest, RmsNormRowsWiderThanTheWorkGroup)
{
  const int rows = 3, cols = 133;
  auto x = random_values(static_cast<std::size_t>(rows * cols), 3.0f);
  auto w = random.around(static_cast<std::size_t>(cols), 1.0f, 0.2f);
  auto dx = upload(x), dw = upload(w);
  auto dy = session->allocate(x.size() * sizeof(float));
  ASSERT_TRUE(dy);
  RmsNormArgs args{&dx, &dw, &*dy, rows, cols, 1e-6f};
  ASSERT_TRUE(run_rmsnorm(*session, args, {}, 64));
  std::vector<float> want(x.size());
  reference_rmsnorm(args, x.data(), w.data(), want.data());
  expect_close(download(*dy, want.size()), want, 1e-5);
}

} // namespace
} // namespace prewarm::engine
