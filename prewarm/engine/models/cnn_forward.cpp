// SPDX-License-Identifier: Apache-2.0
#include "engine/models/cnn_forward.hpp"

#include "engine/ops/conv2d.hpp"
#include "engine/ops/device_tensor.hpp"
#include "engine/ops/uniform_values.hpp"
#include "engine/ops/w8a8.hpp"

#include <cmath>
#include <fmt/format.h>
#include <random>

namespace prewarm::engine::models {

// The ops this forward pass is built of.
using namespace ops;

namespace {

struct ConvStep
{
  Conv2dShape shape;
  Activation activation;
  bool batch_norm;
};

// A layer's weights and bias at random, He-style (activations stay O(1)
// through the ReLUs), with a batch norm folded in where the layer has one.
// The draws are in a fixed order: one seed, one network.
FoldedConv
random_conv(std::mt19937& rng, const Conv2dShape& shape, bool batch_norm)
{
  const auto fan_in = static_cast<float>(shape.in_channels * shape.kernel * shape.kernel);
  const float bound = std::sqrt(6.0f / fan_in);
  const auto weights = uniform_values(rng, shape.weight_size(), -bound, bound);
  if (!batch_norm) {
    return {weights, uniform_values(rng, shape.out_channels, -0.1f, 0.1f)};
  }
  const auto gamma = uniform_values(rng, shape.out_channels, 0.8f, 1.2f);
  const auto beta = uniform_values(rng, shape.out_channels, -0.1f, 0.1f);
  const auto mean = uniform_values(rng, shape.out_channels, -0.1f, 0.1f);
  const auto variance = uniform_values(rng, shape.out_channels, 0.5f, 1.5f);
  return fold_batch_norm(shape, weights, {}, BatchNorm{gamma, beta, mean, variance, 1e-5});
}

// Layer i's max-pool over the map in `device_x` (`x` on the host), checked
// against the reference; both then hold the pooled map.
Status
run_max_pool(Session& session, const FloatFormat& format, ForwardChecker& checker, std::size_t i, int pool_size,
             std::size_t batch, std::size_t channels, std::size_t& height, std::size_t& width, std::vector<float>& x,
             DeviceBuffer& device_x)
{
  const MaxPoolShape pool{.batch = batch,
                          .channels = channels,
                          .in_height = height,
                          .in_width = width,
                          .pool = static_cast<std::size_t>(pool_size)};
  if (pool.out_height() == 0 || pool.out_width() == 0) {
    return fail(Errc::usage, fmt::format("cnn layer {}: max-pool {} over a {}x{} map", i, pool_size, height, width));
  }
  const std::size_t count = batch * channels * pool.out_height() * pool.out_width();
  PW_ASSIGN(DeviceBuffer pooled, session.allocate(count * format.element_bytes()));
  PW_TRY(MaxPool2d(format).run(session, pool, device_x, pooled));
  const std::vector<float> pool_want = MaxPool2d::reference(pool, x);
  PW_ASSIGN(x, download(session, pooled, count, format.storage));
  PW_TRY(checker.check(fmt::format("cnn layer {} max-pool {}", i, pool_size), x, pool_want, {0, 0}));
  device_x = std::move(pooled);
  height = pool.out_height();
  width = pool.out_width();
  return {};
}

} // namespace

Result<ForwardSummary>
run_cnn_forward(Session& session, const CnnArchitecture& architecture, Precision precision, std::size_t batch,
                std::uint32_t seed)
{
  if (architecture.input_width <= 0 || architecture.input_height <= 0 || architecture.input_channels <= 0 ||
      architecture.classes <= 0 || batch == 0) {
    return fail(Errc::usage, "cnn: input size, channels, classes and batch must be positive");
  }
  const FloatFormat format = FloatFormat::for_precision(precision, session);
  const Quantization quantization = precision == Precision::int8 ? Quantization::w8a8 : Quantization::none;
  std::mt19937 rng(seed);
  ForwardChecker checker;

  std::size_t channels = static_cast<std::size_t>(architecture.input_channels);
  std::size_t height = static_cast<std::size_t>(architecture.input_height);
  std::size_t width = static_cast<std::size_t>(architecture.input_width);
  std::vector<float> x = round_to_storage(uniform_values(rng, batch * channels * height * width, -1, 1), format.storage);
  PW_ASSIGN(DeviceBuffer device_x, upload(session, x, format.storage));

  std::vector<ConvStep> steps;
  std::vector<int> pools;
  for (const ConvLayer& layer : architecture.layers) {
    steps.push_back({{.batch = batch, .in_channels = 0, .in_height = 0, .in_width = 0,
                      .out_channels = static_cast<std::size_t>(layer.out_channels),
                      .kernel = static_cast<std::size_t>(layer.kernel), .stride = static_cast<std::size_t>(layer.stride),
                      .padding = static_cast<std::size_t>(layer.padding)},
                     Activation::relu, true});
    pools.push_back(layer.pool);
  }
  steps.push_back({{.batch = batch, .out_channels = static_cast<std::size_t>(architecture.classes), .kernel = 1,
                    .stride = 1, .padding = 0},
                   Activation::none, false});
  pools.push_back(0);

  for (std::size_t i = 0; i < steps.size(); ++i) {
    Conv2dShape shape = steps[i].shape;
    shape.in_channels = channels;
    shape.in_height = height;
    shape.in_width = width;
    if (shape.out_channels == 0 || shape.kernel == 0 || shape.stride == 0 ||
        height + 2 * shape.padding < shape.kernel || width + 2 * shape.padding < shape.kernel) {
      return fail(Errc::usage, fmt::format("cnn layer {}: {}x{} input, kernel {}, padding {}: no output", i, height,
                                           width, shape.kernel, shape.padding));
    }
    const std::string name = fmt::format("cnn layer {} conv {}x{}x{} k{} s{}", i, shape.out_channels,
                                         shape.out_height(), shape.out_width(), shape.kernel, shape.stride);
    const FoldedConv folded = random_conv(rng, shape, steps[i].batch_norm);
    const std::vector<float> bias = round_to_storage(folded.bias, format.storage);
    PW_ASSIGN(DeviceBuffer device_bias, upload(session, bias, format.storage));
    PW_ASSIGN(DeviceBuffer device_y, session.allocate(shape.output_size() * format.element_bytes()));
    std::vector<float> want;
    if (precision == Precision::int8) {
      const std::size_t per_image = shape.input_size() / batch;
      const QuantizedRows wq =
        quantize_weights_per_channel(shape.out_channels, shape.weight_size() / shape.out_channels, folded.weights);
      PW_ASSIGN(DeviceBuffer q, session.allocate(shape.input_size()));
      PW_ASSIGN(DeviceBuffer q_scales, session.allocate(batch * sizeof(float)));
      PW_ASSIGN(DeviceBuffer device_w, upload_raw(session, std::span<const std::int8_t>(wq.values)));
      PW_ASSIGN(DeviceBuffer device_w_scales, upload(session, wq.scales, Storage::fp32));
      PW_TRY(QuantizePerToken(format).run(session, batch, per_image, device_x, q, q_scales));
      PW_TRY(Conv2dW8A8(format, shape.kernel, steps[i].activation)
               .run(session, shape, q, q_scales, device_w, device_w_scales, device_bias, device_y));
      want = Conv2dW8A8::reference(shape, quantize_rows(batch, per_image, x), wq, bias, steps[i].activation);
    } else {
      const std::vector<float> w = round_to_storage(folded.weights, format.storage);
      PW_ASSIGN(DeviceBuffer device_w, upload(session, w, format.storage));
      PW_TRY(Conv2d(format, shape.kernel, steps[i].activation)
               .run(session, shape, device_x, device_w, device_bias, device_y));
      want = Conv2d::reference(shape, x, w, bias, steps[i].activation);
    }
    PW_ASSIGN(x, download(session, device_y, shape.output_size(), format.storage));
    PW_TRY(checker.check(name, x, want, tolerance_for(format, quantization)));
    device_x = std::move(device_y);
    channels = shape.out_channels;
    height = shape.out_height();
    width = shape.out_width();

    if (pools[i] > 0) {
      PW_TRY(run_max_pool(session, format, checker, i, pools[i], batch, channels, height, width, x, device_x));
    }
  }
  return checker.summary();
}

} // namespace prewarm::engine::models
