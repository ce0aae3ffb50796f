// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/rope.hpp"
#include "op_fixture.hpp"

#include <numeric>

namespace prewarm::engine::ops::testing {
namespace {

class RopeTest : public OpFormatTest
{};

TEST_P(RopeTest, PrefillPositionsAfterAPastMatchReference)
{
  const Rope::Shape shape{.tokens = 13, .heads = 3, .head_dim = 64};
  const auto x = random_in(storage(), shape.tokens * shape.heads * shape.head_dim);
  std::vector<std::int32_t> positions(shape.tokens);
  std::iota(positions.begin(), positions.end(), 500); // past = 500
  const auto inv_freq = Rope::inverse_frequencies(shape.head_dim, 1000000.0); // Qwen2's theta
  const auto dx = upload(x, storage());
  must(Rope(format()).run(session(), shape, dx, upload_raw(std::span<const std::int32_t>(positions)),
                          upload(inv_freq, Storage::fp32)));
  expect_close("rope", download(dx, x.size(), storage()), Rope::reference(shape, x, positions, inv_freq),
               tolerance_for(format()));
}

TEST_P(RopeTest, DecodePositionsPerSequenceAndPositionZeroIsIdentity)
{
  const Rope::Shape shape{.tokens = 4, .heads = 2, .head_dim = 32};
  const auto x = random_in(storage(), shape.tokens * shape.heads * shape.head_dim);
  const std::vector<std::int32_t> positions{0, 17, 3, 1023};
  const auto inv_freq = Rope::inverse_frequencies(shape.head_dim, 10000.0);
  const auto dx = upload(x, storage());
  must(Rope(format()).run(session(), shape, dx, upload_raw(std::span<const std::int32_t>(positions)),
                          upload(inv_freq, Storage::fp32)));
  const auto got = download(dx, x.size(), storage());
  expect_close("rope decode", got, Rope::reference(shape, x, positions, inv_freq), tolerance_for(format()));
  for (std::size_t i = 0; i < shape.heads * shape.head_dim; ++i) {
    EXPECT_EQ(got[i], x[i]) << "position 0 rotates by angle 0";
  }
}

TEST_P(RopeTest, OddHeadDimIsRejected)
{
  const Rope::Shape shape{.tokens = 1, .heads = 1, .head_dim = 7};
  const auto buffer = allocate(64);
  const Status status = Rope(format()).run(session(), shape, buffer, buffer, buffer);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), "E_OP_ARGUMENT");
}

INSTANTIATE_TEST_SUITE_P(Ops, RopeTest, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
