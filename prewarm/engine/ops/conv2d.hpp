// SPDX-License-Identifier: Apache-2.0
// conv2d with batch-norm folded into its weights and bias, + optional ReLU, NCHW
// (kernels/conv.cl, conv2d_bias_act). Folding happens once on the host at load
// time (fold_batch_norm), as inference runtimes do; the kernel then sees a plain
// biased convolution. -DKERNEL_SIZE unrolls the window loops, -DFUSE_RELU adds the
// ReLU; local size TILE_X x TILE_Y = 8 x 8 output pixels of one output channel.
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "engine/ops/precision.hpp"
#include "engine/ops/w8a8.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace prewarm::engine::ops {

struct Conv2dShape
{
  std::size_t batch = 1;
  std::size_t in_channels = 0;
  std::size_t in_height = 0;
  std::size_t in_width = 0;
  std::size_t out_channels = 0;
  std::size_t kernel = 3;
  std::size_t stride = 1;
  std::size_t padding = 1;

  std::size_t out_height() const { return (in_height + 2 * padding - kernel) / stride + 1; }
  std::size_t out_width() const { return (in_width + 2 * padding - kernel) / stride + 1; }
  std::size_t input_size() const { return batch * in_channels * in_height * in_width; }
  std::size_t weight_size() const { return out_channels * in_channels * kernel * kernel; }
  std::size_t output_size() const { return batch * out_channels * out_height() * out_width(); }
};

struct BatchNorm // per output channel
{
  std::span<const float> gamma;
  std::span<const float> beta;
  std::span<const float> mean;
  std::span<const float> variance;
  double eps = 1e-5;
};

struct FoldedConv
{
  std::vector<float> weights; // [out_c][in_c][k][k]
  std::vector<float> bias;    // [out_c]
};

// w' = w * gamma / sqrt(var + eps); b' = (b - mean) * gamma / sqrt(var + eps) + beta.
// `bias` may be empty (a conv without bias, as before a batch-norm).
FoldedConv fold_batch_norm(const Conv2dShape& shape, std::span<const float> weights,
                           std::span<const float> bias, const BatchNorm& norm);

enum class Activation { none, relu };

class Conv2d
{
public:
  Conv2d(FloatFormat format, std::size_t kernel, Activation activation, std::size_t tile_x = 8,
         std::size_t tile_y = 8);
  Defines defines() const;
  LaunchGeometry geometry(const Conv2dShape& shape) const;
  // weights/bias: folded (see fold_batch_norm)
  Status run(Session& session, const Conv2dShape& shape, const DeviceBuffer& input,
             const DeviceBuffer& weights, const DeviceBuffer& bias, const DeviceBuffer& output) const;
  // Convolution with the given weights and bias, then ReLU if asked.
  static std::vector<float> reference(const Conv2dShape& shape, std::span<const float> input,
                                      std::span<const float> weights, std::span<const float> bias,
                                      Activation activation);
  // Unfolded: convolution (no bias), batch-norm, ReLU, each step as written in
  // the model: checks fold_batch_norm as well as the kernel.
  static std::vector<float> reference_unfolded(const Conv2dShape& shape, std::span<const float> input,
                                               std::span<const float> weights, std::span<const float> bias,
                                               const BatchNorm& norm, Activation activation);

private:
  FloatFormat m_format;
  std::size_t m_kernel;
  Activation m_activation;
  std::size_t m_tile_x;
  std::size_t m_tile_y;
};

// conv2d_w8a8 (kernels/conv.cl): the int8 model's convolution. The input is
// quantized per image by QuantizePerToken (rows = batch, cols = C*H*W), the
// folded weights per output channel by quantize_weights_per_channel (out_c rows
// of in_c*k*k); the bias stays float (it is added after dequantization).
class Conv2dW8A8
{
public:
  Conv2dW8A8(FloatFormat format, std::size_t kernel, Activation activation, std::size_t tile_x = 8,
             std::size_t tile_y = 8);
  Defines defines() const;
  LaunchGeometry geometry(const Conv2dShape& shape) const;
  // input: int8, in_scales: float [batch], weights: int8, w_scales: float [out_c],
  // bias: [out_c] and output in the op's storage format.
  Status run(Session& session, const Conv2dShape& shape, const DeviceBuffer& input, const DeviceBuffer& in_scales,
             const DeviceBuffer& weights, const DeviceBuffer& w_scales, const DeviceBuffer& bias,
             const DeviceBuffer& output) const;
  // Exact integer convolution, dequantized in double. input: QuantizedRows with
  // one row per image; weights: one row per output channel.
  static std::vector<float> reference(const Conv2dShape& shape, const QuantizedRows& input,
                                      const QuantizedRows& weights, std::span<const float> bias,
                                      Activation activation);

private:
  FloatFormat m_format;
  std::size_t m_kernel;
  Activation m_activation;
  std::size_t m_tile_x;
  std::size_t m_tile_y;
};

struct MaxPoolShape
{
  std::size_t batch = 1;
  std::size_t channels = 0;
  std::size_t in_height = 0;
  std::size_t in_width = 0;
  std::size_t pool = 2; // window and stride

  std::size_t out_height() const { return in_height / pool; }
  std::size_t out_width() const { return in_width / pool; }
};

// max_pool2d (kernels/conv.cl): window = stride = pool, sizes rounded down.
class MaxPool2d
{
public:
  explicit MaxPool2d(FloatFormat format, std::size_t tile_x = 8, std::size_t tile_y = 8);
  Defines defines() const;
  LaunchGeometry geometry(const MaxPoolShape& shape) const;
  Status run(Session& session, const MaxPoolShape& shape, const DeviceBuffer& input,
             const DeviceBuffer& output) const;
  static std::vector<float> reference(const MaxPoolShape& shape, std::span<const float> input);

private:
  FloatFormat m_format;
  std::size_t m_tile_x;
  std::size_t m_tile_y;
};

} // namespace prewarm::engine::ops
