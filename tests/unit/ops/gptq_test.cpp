// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/gptq.hpp"
#include "op_fixture.hpp"
#include "random_gptq.hpp"

namespace prewarm::engine::ops::testing {
namespace {

class GptqTest : public OpFormatTest
{
protected:
  // reorder (act-order only) + matmul on the device vs gptq_reference in checkpoint order.
  void run_layer(std::size_t rows, std::size_t in, std::size_t out, std::size_t group_size, GroupOrder order)
  {
    const GptqWeights w = random_gptq(rng(), in, out, group_size, order);
    GptqWeights stored = w; // scales as the device stores them
    stored.scales = round_to_storage(w.scales, storage());
    const ActOrderWeights shuffled = must(shuffle_for_act_order(stored));
    const auto x = random_in(storage(), rows * in);
    const auto dx = upload(x, storage());

    DeviceBuffer x_perm = allocate(rows * in * format().element_bytes());
    must(GptqReorder(format()).run(session(), rows, in, dx, upload_raw(std::span<const std::int32_t>(shuffled.perm)),
                                   x_perm));
    // The reorder moves values: exact.
    expect_close("gptq_reorder_activations", download(x_perm, rows * in, storage()),
                 GptqReorder::reference(rows, in, x, shuffled.perm), {0, 0});

    const LinearShape shape{.rows = rows, .out = out, .in = in};
    const auto y = allocate(rows * out * format().element_bytes());
    must(GptqMatmul(format()).run(session(), shape, group_size, x_perm,
                                  upload_raw(std::span<const std::uint32_t>(shuffled.qweight)),
                                  upload(stored.scales, storage()),
                                  upload_raw(std::span<const std::uint32_t>(stored.qzeros)), y));
    expect_close("gptq_matmul " + std::to_string(rows) + "x" + std::to_string(out) + "x" + std::to_string(in) +
                   " g" + std::to_string(group_size),
                 download(y, rows * out, storage()), gptq_reference(rows, x, stored),
                 tolerance_for(format(), Quantization::gptq_int4));
  }
};

TEST_P(GptqTest, ActOrderPrefill)
{
  // 136 outputs: not a multiple of the local size 64; K = 320 with groups of 64.
  run_layer(7, 320, 136, 64, GroupOrder::act_order);
}

TEST_P(GptqTest, ActOrderDecodeWithAPartialLastGroup)
{
  // K = 200 with groups of 64: the last group holds 8 channels.
  run_layer(1, 200, 64, 64, GroupOrder::act_order);
}

TEST_P(GptqTest, SequentialGroupsNeedNoReorderButStillMatch)
{
  run_layer(3, 256, 40, 128, GroupOrder::sequential);
}

INSTANTIATE_TEST_SUITE_P(Ops, GptqTest, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
