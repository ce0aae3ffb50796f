// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/gemv.hpp"
#include "op_fixture.hpp"

namespace prewarm::engine::ops::testing {
namespace {

class GemvTest : public OpFormatTest
{};

TEST_P(GemvTest, DecodeRowsMatchReference)
{
  // K not a multiple of the local size 64; K = 33 leaves 31 work-items without work.
  for (const LinearShape shape : {LinearShape{3, 77, 300}, LinearShape{1, 5, 33}, LinearShape{2, 64, 896}}) {
    const auto x = random_in(storage(), shape.rows * shape.in);
    const auto w = random_in(storage(), shape.out * shape.in, -0.1f, 0.1f);
    const auto y = allocate(shape.rows * shape.out * format().element_bytes());
    must(Gemv(format()).run(session(), shape, upload(x, storage()), upload(w, storage()), y));
    expect_close("gemv " + std::to_string(shape.rows) + "x" + std::to_string(shape.out) + "x" +
                   std::to_string(shape.in),
                 download(y, shape.rows * shape.out, storage()), Gemv::reference(shape, x, w),
                 tolerance_for(format()));
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GemvTest, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
