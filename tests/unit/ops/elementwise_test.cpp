// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/bfloat16.hpp"
#include "engine/ops/elementwise.hpp"
#include "op_fixture.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

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

INSTANTIATE_TEST_SUITE_P(Ops, Elementwise, every_format(), format_name);

// The kernels' bf16 STORE rounds as the host's float_to_bf16, bit for bit:
// the device adds two bf16 values in float as the host does, then stores. The
// first pairs (all bf16 values, their sums exact in float) fall on ties (even
// and odd), just above and below one, on a tie at the top that overflows to
// infinity, and on NaN; random pairs follow.
class Bf16Store : public OpTest
{};

TEST_F(Bf16Store, RoundsToNearestEvenExactlyAsTheHost)
{
  const float one = 1.0f;
  const float tie = std::ldexp(1.0f, -8); // half a bf16 ulp at 1
  const float bf16_max = bf16_to_float(0x7F7F);
  std::vector<float> a{one, one + 2 * tie, one, one, -(one + 2 * tie), bf16_max, NAN};
  std::vector<float> b{tie, tie, tie + std::ldexp(1.0f, -15), tie - std::ldexp(1.0f, -16), -tie,
                       std::ldexp(1.0f, 119), 1.0f};
  const std::vector<std::uint16_t> expected_special{0x3F80, 0x3F82, 0x3F81, 0x3F80, 0xBF82, 0x7F80};
  const auto random_a = random_in(Storage::bf16, 1000, -100, 100);
  const auto random_b = random_in(Storage::bf16, 1000, -1, 1);
  a.insert(a.end(), random_a.begin(), random_a.end());
  b.insert(b.end(), random_b.begin(), random_b.end());

  const FloatFormat bf16 = FloatFormat::bf16();
  const auto out = allocate(a.size() * bf16.element_bytes());
  must(ResidualAdd(bf16).run(session(), a.size(), upload(a, Storage::bf16), upload(b, Storage::bf16), out));
  const auto got = download(out, a.size(), Storage::bf16);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::uint16_t want = float_to_bf16(a[i] + b[i]);
    if (i < expected_special.size()) {
      ASSERT_EQ(want, expected_special[i]) << "host rounding of case " << i;
    }
    if (std::isnan(a[i] + b[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
      continue;
    }
    EXPECT_EQ(float_to_bf16(got[i]), want) << "element " << i << ": " << a[i] << " + " << b[i];
  }
}

} // namespace
} // namespace prewarm::engine::ops::testing
