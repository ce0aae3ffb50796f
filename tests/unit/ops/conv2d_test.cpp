// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/conv2d.hpp"
#include "engine/ops/w8a8.hpp"
#include "op_fixture.hpp"

#include <algorithm>

namespace prewarm::engine::ops::testing {
namespace {

class Conv2dTest : public OpFormatTest
{};

TEST_P(Conv2dTest, FoldedBatchNormReluMatchesTheUnfoldedModel)
{
  // 13 x 11 output: not a multiple of the 8 x 8 tile; stride 1 and 2, kernels 3 and 1.
  const Conv2dShape shapes[] = {
    {.batch = 2, .in_channels = 3, .in_height = 13, .in_width = 11, .out_channels = 5, .kernel = 3, .stride = 1, .padding = 1},
    {.batch = 1, .in_channels = 4, .in_height = 10, .in_width = 17, .out_channels = 3, .kernel = 3, .stride = 2, .padding = 1},
    {.batch = 1, .in_channels = 6, .in_height = 5, .in_width = 9, .out_channels = 7, .kernel = 1, .stride = 1, .padding = 0},
  };
  for (const Conv2dShape& shape : shapes) {
    const auto input = random_in(storage(), shape.input_size());
    const auto weights = random(shape.weight_size(), -0.5f, 0.5f);
    const auto gamma = random(shape.out_channels, 0.5f, 1.5f);
    const auto beta = random(shape.out_channels, -0.2f, 0.2f);
    const auto mean = random(shape.out_channels, -0.3f, 0.3f);
    const auto variance = random(shape.out_channels, 0.2f, 2.0f);
    const BatchNorm norm{gamma, beta, mean, variance, 1e-5};
    FoldedConv folded = fold_batch_norm(shape, weights, {}, norm);
    // The device sees the folded weights in its storage format; so does the reference.
    folded.weights = round_to_storage(folded.weights, storage());
    folded.bias = round_to_storage(folded.bias, storage());

    const auto out = allocate(shape.output_size() * format().element_bytes());
    must(Conv2d(format(), shape.kernel, Activation::relu)
           .run(session(), shape, upload(input, storage()), upload(folded.weights, storage()),
                upload(folded.bias, storage()), out));
    const auto got = download(out, shape.output_size(), storage());
    expect_close("conv2d k=" + std::to_string(shape.kernel) + " s=" + std::to_string(shape.stride), got,
                 Conv2d::reference(shape, input, folded.weights, folded.bias, Activation::relu),
                 tolerance_for(format()));
    if (format().storage == Storage::fp32) {
      expect_close("conv2d vs unfolded model", got,
                   Conv2d::reference_unfolded(shape, input, weights, {}, norm, Activation::relu),
                   tolerance_for(format()));
    }
  }
}

TEST_P(Conv2dTest, WithoutReluNegativeOutputsSurvive)
{
  const Conv2dShape shape{.batch = 1, .in_channels = 2, .in_height = 6, .in_width = 6, .out_channels = 2,
                          .kernel = 3, .stride = 1, .padding = 1};
  const auto input = random_in(storage(), shape.input_size());
  const auto weights = random_in(storage(), shape.weight_size());
  const auto bias = random_in(storage(), shape.out_channels);
  const auto out = allocate(shape.output_size() * format().element_bytes());
  must(Conv2d(format(), 3, Activation::none)
         .run(session(), shape, upload(input, storage()), upload(weights, storage()), upload(bias, storage()), out));
  const auto got = download(out, shape.output_size(), storage());
  expect_close("conv2d no relu", got, Conv2d::reference(shape, input, weights, bias, Activation::none),
               tolerance_for(format()));
  EXPECT_LT(*std::min_element(got.begin(), got.end()), 0.0f);
}

TEST_P(Conv2dTest, MaxPoolDropsTheRemainder)
{
  const MaxPoolShape shape{.batch = 2, .channels = 3, .in_height = 11, .in_width = 20, .pool = 2};
  const auto input = random_in(storage(), shape.batch * shape.channels * shape.in_height * shape.in_width, -5, 5);
  const std::size_t count = shape.batch * shape.channels * shape.out_height() * shape.out_width();
  const auto out = allocate(count * format().element_bytes());
  must(MaxPool2d(format()).run(session(), shape, upload(input, storage()), out));
  // A max selects one of its inputs: exact in every format.
  expect_close("max_pool2d", download(out, count, storage()), MaxPool2d::reference(shape, input), {0, 0});
}

TEST_P(Conv2dTest, W8A8ConvolutionOfAFoldedLayer)
{
  // The int8 model: per-image activation scale, per-channel weight scales, float bias.
  const Conv2dShape shape{.batch = 2, .in_channels = 3, .in_height = 12, .in_width = 19, .out_channels = 6,
                          .kernel = 3, .stride = 1, .padding = 1};
  const auto input = random_in(storage(), shape.input_size(), -2, 2);
  const auto weights = random(shape.weight_size(), -0.5f, 0.5f);
  const auto gamma = random(shape.out_channels, 0.5f, 1.5f);
  const auto beta = random(shape.out_channels, -0.2f, 0.2f);
  const auto mean = random(shape.out_channels, -0.3f, 0.3f);
  const auto variance = random(shape.out_channels, 0.2f, 2.0f);
  const BatchNorm norm{gamma, beta, mean, variance, 1e-5};
  const FoldedConv folded = fold_batch_norm(shape, weights, {}, norm);
  const QuantizedRows wq = quantize_weights_per_channel(shape.out_channels, shape.weight_size() / shape.out_channels,
                                                        folded.weights);
  const auto bias = round_to_storage(folded.bias, storage());

  const std::size_t per_image = shape.input_size() / shape.batch;
  const auto q = allocate(shape.input_size());
  const auto q_scales = allocate(shape.batch * sizeof(float));
  must(QuantizePerToken(format()).run(session(), shape.batch, per_image, upload(input, storage()), q, q_scales));
  const auto out = allocate(shape.output_size() * format().element_bytes());
  must(Conv2dW8A8(format(), 3, Activation::relu)
         .run(session(), shape, q, q_scales, upload_raw(std::span<const std::int8_t>(wq.values)),
              upload(wq.scales, Storage::fp32), upload(bias, storage()), out));
  const auto got = download(out, shape.output_size(), storage());
  expect_close("conv2d_w8a8", got,
               Conv2dW8A8::reference(shape, quantize_rows(shape.batch, per_image, input), wq, bias, Activation::relu),
               tolerance_for(format(), Quantization::w8a8));
  // Close to the float model too (int8 steps of 1/127 of the peaks).
  expect_close("conv2d_w8a8 vs float model", got,
               Conv2d::reference_unfolded(shape, input, weights, {}, norm, Activation::relu), {3e-2, 0});
}

INSTANTIATE_TEST_SUITE_P(Ops, Conv2dTest, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
