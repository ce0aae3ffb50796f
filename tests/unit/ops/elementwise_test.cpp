// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/elementwise.hpp"
#include "op_fixture.hpp"

namespace prewarm::engine::ops::testing {
namespace {

class Elementwise : public OpFormatTest
{};

// 1000 elements: not a multiple of the local size 128 (the tail is guarded).
constexpr std::size_t count = 1000;

TEST_P(Elementwise, ResidualAddMatchesReference)
{
  const auto a = random_in(storage(), count, -4, 4);
  const auto b = random_in(storage(), count, -4, 4);
  const auto da = upload(a, storage());
  const auto db = upload(b, storage());
  const auto out = allocate(count * format().element_bytes());
  must(ResidualAdd(format()).run(session(), count, da, db, out));
  expect_close("residual_add", download(out, count, storage()), ResidualAdd::reference(a, b),
               tolerance_for(format()));
}

TEST_P(Elementwise, ResidualAddInPlace)
{
  const auto a = random_in(storage(), count);
  const auto b = random_in(storage(), count);
  const auto da = upload(a, storage());
  const auto db = upload(b, storage());
  must(ResidualAdd(format()).run(session(), count, da, db, da));
  expect_close("residual_add in place", download(da, count, storage()), ResidualAdd::reference(a, b),
               tolerance_for(format()));
}

TEST_P(Elementwise, SiluMulMatchesReference)
{
  const auto gate = random_in(storage(), count, -8, 8);
  const auto up = random_in(storage(), count, -2, 2);
  const auto dg = upload(gate, storage());
  const auto du = upload(up, storage());
  const auto out = allocate(count * format().element_bytes());
  must(SiluMul(format()).run(session(), count, dg, du, out));
  expect_close("silu_mul", download(out, count, storage()), SiluMul::reference(gate, up),
               tolerance_for(format()));
}

TEST_P(Elementwise, GeluMatchesReference)
{
  const auto x = random_in(storage(), count, -5, 5);
  const auto dx = upload(x, storage());
  const auto out = allocate(count * format().element_bytes());
  must(Gelu(format()).run(session(), count, dx, out));
  expect_close("gelu", download(out, count, storage()), Gelu::reference(x), tolerance_for(format()));
}

TEST_P(Elementwise, ShortBufferIsRejectedBeforeLaunch)
{
  const auto small = allocate(10 * format().element_bytes());
  const Status status = Gelu(format()).run(session(), count, small, small);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), "E_OP_ARGUMENT");
}

INSTANTIATE_TEST_SUITE_P(Ops, Elementwise, ::testing::Values(Format::fp32, Format::fp16), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
