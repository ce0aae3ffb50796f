// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/conv2d.hpp"

#include "engine/ops/device_tensor.hpp"

#include <algorithm>
#include <cmath>

namespace prewarm::engine::ops {

FoldedConv
fold_batch_norm(const Conv2dShape& shape, std::span<const float> weights, std::span<const float> bias,
                const BatchNorm& norm)
{
  FoldedConv folded;
  folded.weights.resize(shape.weight_size());
  folded.bias.resize(shape.out_channels);
  const std::size_t per_channel = shape.in_channels * shape.kernel * shape.kernel;
  for (std::size_t oc = 0; oc < shape.out_channels; ++oc) {
    const double factor = norm.gamma[oc] / std::sqrt(static_cast<double>(norm.variance[oc]) + norm.eps);
    for (std::size_t i = 0; i < per_channel; ++i) {
      folded.weights[oc * per_channel + i] = static_cast<float>(weights[oc * per_channel + i] * factor);
    }
    const double b = bias.empty() ? 0.0 : static_cast<double>(bias[oc]);
    folded.bias[oc] = static_cast<float>((b - norm.mean[oc]) * factor + norm.beta[oc]);
  }
  return folded;
}

namespace {

// Convolution in double with an optional bias; out[n][oc][y][x].
std::vector<double>
convolve(const Conv2dShape& shape, std::span<const float> input, std::span<const float> weights,
         std::span<const float> bias)
{
  const std::size_t oh = shape.out_height();
  const std::size_t ow = shape.out_width();
  const std::size_t k = shape.kernel;
  std::vector<double> out(shape.output_size());
  for (std::size_t n = 0; n < shape.batch; ++n) {
    for (std::size_t oc = 0; oc < shape.out_channels; ++oc) {
      for (std::size_t oy = 0; oy < oh; ++oy) {
        for (std::size_t ox = 0; ox < ow; ++ox) {
          double sum = bias.empty() ? 0.0 : static_cast<double>(bias[oc]);
          for (std::size_t ic = 0; ic < shape.in_channels; ++ic) {
            for (std::size_t ky = 0; ky < k; ++ky) {
              const auto y = static_cast<std::ptrdiff_t>(oy * shape.stride + ky) -
                             static_cast<std::ptrdiff_t>(shape.padding);
              if (y < 0 || y >= static_cast<std::ptrdiff_t>(shape.in_height)) {
                continue;
              }
              for (std::size_t kx = 0; kx < k; ++kx) {
                const auto x = static_cast<std::ptrdiff_t>(ox * shape.stride + kx) -
                               static_cast<std::ptrdiff_t>(shape.padding);
                if (x < 0 || x >= static_cast<std::ptrdiff_t>(shape.in_width)) {
                  continue;
                }
                const std::size_t in_index =
                  ((n * shape.in_channels + ic) * shape.in_height + static_cast<std::size_t>(y)) *
                    shape.in_width + static_cast<std::size_t>(x);
                const std::size_t w_index = ((oc * shape.in_channels + ic) * k + ky) * k + kx;
                sum += static_cast<double>(input[in_index]) * static_cast<double>(weights[w_index]);
              }
            }
          }
          out[((n * shape.out_channels + oc) * oh + oy) * ow + ox] = sum;
        }
      }
    }
  }
  return out;
}

} // namespace

Conv2d::Conv2d(FloatFormat format, std::size_t kernel, Activation activation, std::size_t tile_x,
               std::size_t tile_y)
  : m_format(format), m_kernel(kernel), m_activation(activation), m_tile_x(tile_x), m_tile_y(tile_y)
{
}

Defines
Conv2d::defines() const
{
  Defines defines;
  add_precision_defines(defines, m_format);
  defines.set("KERNEL_SIZE", static_cast<std::int64_t>(m_kernel));
  if (m_activation == Activation::relu) {
    defines.flag("FUSE_RELU");
  }
  return defines;
}

LaunchGeometry
Conv2d::geometry(const Conv2dShape& shape) const
{
  return LaunchGeometry::grid({round_up(shape.out_width(), m_tile_x), round_up(shape.out_height(), m_tile_y),
                               shape.batch * shape.out_channels},
                              {m_tile_x, m_tile_y, 1});
}

Status
Conv2d::run(Session& session, const Conv2dShape& shape, const DeviceBuffer& input,
            const DeviceBuffer& weights, const DeviceBuffer& bias, const DeviceBuffer& output) const
{
  constexpr std::string_view op = "conv2d";
  PW_TRY(require_shape(op, shape.kernel == m_kernel, "kernel size differs from the op's specialisation"));
  PW_TRY(require_shape(op, shape.batch > 0 && shape.in_channels > 0 && shape.out_channels > 0 && shape.stride > 0,
                       "batch, channels and stride must be positive"));
  PW_TRY(require_shape(op, shape.in_height + 2 * shape.padding >= shape.kernel &&
                             shape.in_width + 2 * shape.padding >= shape.kernel,
                       "the padded input is smaller than the kernel"));
  const std::size_t e = m_format.element_bytes();
  PW_TRY(require_bytes(op, "input", input, shape.input_size() * e));
  PW_TRY(require_bytes(op, "weights", weights, shape.weight_size() * e));
  PW_TRY(require_bytes(op, "bias", bias, shape.out_channels * e));
  PW_TRY(require_bytes(op, "output", output, shape.output_size() * e));
  PW_ASSIGN(Kernel kernel, session.kernel("conv.cl", "conv2d_bias_act", defines()));
  const auto u = [](std::size_t v) { return static_cast<cl_uint>(v); };
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(input).buffer(weights).buffer(bias).buffer(output)
                          .value(u(shape.in_channels)).value(u(shape.in_height)).value(u(shape.in_width))
                          .value(u(shape.out_channels)).value(u(shape.out_height())).value(u(shape.out_width()))
                          .value(u(shape.stride)).value(u(shape.padding)));
}

std::vector<float>
Conv2d::reference(const Conv2dShape& shape, std::span<const float> input, std::span<const float> weights,
                  std::span<const float> bias, Activation activation)
{
  const std::vector<double> sums = convolve(shape, input, weights, bias);
  std::vector<float> out(sums.size());
  for (std::size_t i = 0; i < sums.size(); ++i) {
    out[i] = static_cast<float>(activation == Activation::relu ? std::max(sums[i], 0.0) : sums[i]);
  }
  return out;
}

std::vector<float>
Conv2d::reference_unfolded(const Conv2dShape& shape, std::span<const float> input,
                           std::span<const float> weights, std::span<const float> bias,
                           const BatchNorm& norm, Activation activation)
{
  const std::vector<double> sums = convolve(shape, input, weights, bias);
  const std::size_t plane = shape.out_height() * shape.out_width();
  std::vector<float> out(sums.size());
  for (std::size_t i = 0; i < sums.size(); ++i) {
    const std::size_t oc = (i / plane) % shape.out_channels;
    double v = (sums[i] - norm.mean[oc]) / std::sqrt(static_cast<double>(norm.variance[oc]) + norm.eps) *
                 norm.gamma[oc] + norm.beta[oc];
    if (activation == Activation::relu) {
      v = std::max(v, 0.0);
    }
    out[i] = static_cast<float>(v);
  }
  return out;
}

Conv2dW8A8::Conv2dW8A8(FloatFormat format, std::size_t kernel, Activation activation, std::size_t tile_x,
                       std::size_t tile_y)
  : m_format(format), m_kernel(kernel), m_activation(activation), m_tile_x(tile_x), m_tile_y(tile_y)
{
}

Defines
Conv2dW8A8::defines() const
{
  return Conv2d(m_format, m_kernel, m_activation, m_tile_x, m_tile_y).defines();
}

LaunchGeometry
Conv2dW8A8::geometry(const Conv2dShape& shape) const
{
  return Conv2d(m_format, m_kernel, m_activation, m_tile_x, m_tile_y).geometry(shape);
}

Status
Conv2dW8A8::run(Session& session, const Conv2dShape& shape, const DeviceBuffer& input,
                const DeviceBuffer& in_scales, const DeviceBuffer& weights, const DeviceBuffer& w_scales,
                const DeviceBuffer& bias, const DeviceBuffer& output) const
{
  constexpr std::string_view op = "conv2d_w8a8";
  PW_TRY(require_shape(op, shape.kernel == m_kernel, "kernel size differs from the op's specialisation"));
  PW_TRY(require_shape(op, shape.batch > 0 && shape.in_channels > 0 && shape.out_channels > 0 && shape.stride > 0,
                       "batch, channels and stride must be positive"));
  PW_TRY(require_shape(op, shape.in_height + 2 * shape.padding >= shape.kernel &&
                             shape.in_width + 2 * shape.padding >= shape.kernel,
                       "the padded input is smaller than the kernel"));
  // int32 sums: 127 * 127 * in_c * k * k must stay below 2^31.
  PW_TRY(require_shape(op, shape.in_channels * shape.kernel * shape.kernel <= 133143,
                       "in_channels * kernel^2 above 133143 could overflow the int32 accumulator"));
  const std::size_t e = m_format.element_bytes();
  PW_TRY(require_bytes(op, "input", input, shape.input_size()));
  PW_TRY(require_bytes(op, "in_scales", in_scales, shape.batch * sizeof(float)));
  PW_TRY(require_bytes(op, "weights", weights, shape.weight_size()));
  PW_TRY(require_bytes(op, "w_scales", w_scales, shape.out_channels * sizeof(float)));
  PW_TRY(require_bytes(op, "bias", bias, shape.out_channels * e));
  PW_TRY(require_bytes(op, "output", output, shape.output_size() * e));
  PW_ASSIGN(Kernel kernel, session.kernel("conv.cl", "conv2d_w8a8", defines()));
  const auto u = [](std::size_t v) { return static_cast<cl_uint>(v); };
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(input).buffer(in_scales).buffer(weights).buffer(w_scales)
                          .buffer(bias).buffer(output)
                          .value(u(shape.in_channels)).value(u(shape.in_height)).value(u(shape.in_width))
                          .value(u(shape.out_channels)).value(u(shape.out_height())).value(u(shape.out_width()))
                          .value(u(shape.stride)).value(u(shape.padding)));
}

std::vector<float>
Conv2dW8A8::reference(const Conv2dShape& shape, const QuantizedRows& input, const QuantizedRows& weights,
                      std::span<const float> bias, Activation activation)
{
  // Integer values are exact in double: the float convolution over them is the
  // int32 sum the kernel computes.
  const std::vector<float> in_values(input.values.begin(), input.values.end());
  const std::vector<float> w_values(weights.values.begin(), weights.values.end());
  const std::vector<double> sums = convolve(shape, in_values, w_values, {});
  const std::size_t plane = shape.out_height() * shape.out_width();
  std::vector<float> out(sums.size());
  for (std::size_t i = 0; i < sums.size(); ++i) {
    const std::size_t n = i / (plane * shape.out_channels);
    const std::size_t oc = (i / plane) % shape.out_channels;
    double v = sums[i] * input.scales[n] * weights.scales[oc] + bias[oc];
    if (activation == Activation::relu) {
      v = std::max(v, 0.0);
    }
    out[i] = static_cast<float>(v);
  }
  return out;
}

MaxPool2d::MaxPool2d(FloatFormat format, std::size_t tile_x, std::size_t tile_y)
  : m_format(format), m_tile_x(tile_x), m_tile_y(tile_y)
{
}

Defines
MaxPool2d::defines() const
{
  Defines defines;
  add_precision_defines(defines, m_format);
  return defines;
}

LaunchGeometry
MaxPool2d::geometry(const MaxPoolShape& shape) const
{
  return LaunchGeometry::grid({round_up(shape.out_width(), m_tile_x), round_up(shape.out_height(), m_tile_y),
                               shape.batch * shape.channels},
                              {m_tile_x, m_tile_y, 1});
}

Status
MaxPool2d::run(Session& session, const MaxPoolShape& shape, const DeviceBuffer& input,
               const DeviceBuffer& output) const
{
  constexpr std::string_view op = "max_pool2d";
  PW_TRY(require_shape(op, shape.pool > 0 && shape.out_height() > 0 && shape.out_width() > 0 &&
                             shape.batch * shape.channels > 0,
                       "the input must hold at least one pooling window"));
  const std::size_t e = m_format.element_bytes();
  PW_TRY(require_bytes(op, "input", input, shape.batch * shape.channels * shape.in_height * shape.in_width * e));
  PW_TRY(require_bytes(op, "output", output,
                       shape.batch * shape.channels * shape.out_height() * shape.out_width() * e));
  PW_ASSIGN(Kernel kernel, session.kernel("conv.cl", "max_pool2d", defines()));
  const auto u = [](std::size_t v) { return static_cast<cl_uint>(v); };
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(input).buffer(output)
                          .value(u(shape.in_height)).value(u(shape.in_width))
                          .value(u(shape.out_height())).value(u(shape.out_width())).value(u(shape.pool)));
}

std::vector<float>
MaxPool2d::reference(const MaxPoolShape& shape, std::span<const float> input)
{
  const std::size_t oh = shape.out_height();
  const std::size_t ow = shape.out_width();
  std::vector<float> out(shape.batch * shape.channels * oh * ow);
  for (std::size_t p = 0; p < shape.batch * shape.channels; ++p) {
    for (std::size_t oy = 0; oy < oh; ++oy) {
      for (std::size_t ox = 0; ox < ow; ++ox) {
        float best = -INFINITY;
        for (std::size_t dy = 0; dy < shape.pool; ++dy) {
          for (std::size_t dx = 0; dx < shape.pool; ++dx) {
            best = std::max(best, input[(p * shape.in_height + oy * shape.pool + dy) * shape.in_width +
                                        ox * shape.pool + dx]);
          }
        }
        out[(p * oh + oy) * ow + ox] = best;
      }
    }
  }
  return out;
}

} // namespace prewarm::engine::ops
