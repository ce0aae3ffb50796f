// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/gptq_layer.hpp"
#include "engine/ops/linear.hpp"
#include "op_fixture.hpp"
#include "random_gptq.hpp"

#include <tuple>

namespace prewarm::engine::ops::testing {
namespace {

using LinearCase = std::tuple<Precision, Phase>;

class LinearTest
  : public OpTest
  , public ::testing::WithParamInterface<LinearCase>
{};

TEST_P(LinearTest, EachPrecisionAndPhaseMatchesItsReference)
{
  const auto [precision, phase] = GetParam();
  // Prefill: 19 rows, not a multiple of the 16 x 16 tiles; decode: a batch of 2.
  const std::size_t rows = phase == Phase::prefill ? 19 : 2;
  const std::size_t out = 45;
  const std::size_t in = 70;
  const auto w = random(out * in, -0.3f, 0.3f);
  Linear layer = must(Linear::load(session(), precision, out, in, w));
  const auto x = random_in(layer.format().storage, rows * in, -2, 2);
  const auto y = allocate(rows * out * layer.format().element_bytes());
  must(layer.run(session(), phase, rows, upload(x, layer.format().storage), y));
  expect_close(std::string("linear ") + std::string(to_string(precision)) +
                 (phase == Phase::prefill ? " prefill" : " decode"),
               download(y, rows * out, layer.format().storage), layer.reference(rows, x), layer.tolerance());
}

std::string
linear_case_name(const ::testing::TestParamInfo<LinearCase>& info)
{
  return std::string(to_string(std::get<0>(info.param))) +
         (std::get<1>(info.param) == Phase::prefill ? "_prefill" : "_decode");
}

INSTANTIATE_TEST_SUITE_P(Ops, LinearTest,
                         ::testing::Combine(every_precision(),
                                            ::testing::Values(Phase::prefill, Phase::decode)),
                         linear_case_name);

class GptqLayerTest : public OpFormatTest
{};

TEST_P(GptqLayerTest, LoadsShufflesAndRunsBothGroupOrders)
{
  for (const GroupOrder order : {GroupOrder::act_order, GroupOrder::sequential}) {
    GptqLayer layer = must(GptqLayer::load(session(), format(), random_gptq(rng(), 128, 24, 32, order)));
    EXPECT_EQ(layer.act_order(), order == GroupOrder::act_order ? ActOrder::reorder : ActOrder::sequential);
    const std::size_t rows = 5;
    const auto x = random_in(storage(), rows * 128);
    const auto y = allocate(rows * 24 * format().element_bytes());
    must(layer.run(session(), rows, upload(x, storage()), y));
    expect_close(order == GroupOrder::act_order ? "gptq linear act-order" : "gptq linear sequential",
                 download(y, rows * 24, storage()), layer.reference(rows, x), layer.tolerance());
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GptqLayerTest, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
