// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/layer_norm.hpp"
#include "op_fixture.hpp"

namespace prewarm::engine::ops::testing {
namespace {

class LayerNormTest : public OpFormatTest
{};

TEST_P(LayerNormTest, MatchesReferenceOnRowsNotAMultipleOfTheLocalSize)
{
  for (const LayerNorm::Shape shape : {LayerNorm::Shape{5, 200}, LayerNorm::Shape{3, 7}, LayerNorm::Shape{2, 896}}) {
    // An offset mean checks the two-pass variance.
    const auto x = random_in(storage(), shape.rows * shape.cols, 2, 6);
    const auto gamma = random_in(storage(), shape.cols, 0.5f, 1.5f);
    const auto beta = random_in(storage(), shape.cols, -0.5f, 0.5f);
    const auto out = allocate(x.size() * format().element_bytes());
    const float eps = 1e-5f;
    must(LayerNorm(format()).run(session(), shape, upload(x, storage()), upload(gamma, storage()),
                                 upload(beta, storage()), out, eps));
    expect_close("layer_norm " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols),
                 download(out, x.size(), storage()), LayerNorm::reference(shape, x, gamma, beta, eps),
                 tolerance_for(format()));
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, LayerNormTest, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
