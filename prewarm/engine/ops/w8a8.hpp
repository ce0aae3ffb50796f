// SPDX-License-Identifier: Apache-2.0
// W8A8 linear layers (kernels/w8a8.cl), SmoothQuant style:
//   weights   int8 [out][in], symmetric, one float scale per output channel
//             (quantize_weights_per_channel, once at load time)
//   activations quantized per token at run time by QuantizePerToken:
//             scale[m] = max|x[m]| / 127, q = clamp(rint(x * (127 / max)), -127, 127)
//   y[m][n] = (sum_k q[m][k] * w[n][k]) (int32) * a_scale[m] * w_scale[n]
// W8A8Gemm serves prefill (TILE x TILE = 16 x 16 outputs per work-group, K staged
// through local memory), W8A8Gemv decode (LOCAL_SIZE = 64 work-items per output).
// Float inputs and outputs are in the op's FloatFormat.
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "engine/ops/gemv.hpp"
#include "engine/ops/precision.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace prewarm::engine::ops {

struct QuantizedRows
{
  std::vector<std::int8_t> values; // [rows][cols]
  std::vector<float> scales;       // [rows]: value = q * scale
};

// Symmetric per-row int8 with the same float steps as the kernel, so the
// device and the reference agree exactly where the device divides exactly.
QuantizedRows quantize_rows(std::size_t rows, std::size_t cols, std::span<const float> x);
// Weights [out][in] -> per output channel: the same rule, applied at load time.
inline QuantizedRows
quantize_weights_per_channel(std::size_t out, std::size_t in, std::span<const float> w)
{
  return quantize_rows(out, in, w);
}

// The specialisation of w8a8.cl. The three W8A8 ops compile the file with both
// values, so a model builds w8a8.cl once, not once per op.
struct W8A8Config
{
  std::size_t local_size = 64; // quantize_per_token and w8a8_gemv (power of two)
  std::size_t tile = 16;       // w8a8_gemm: TILE x TILE work-groups
};

Defines w8a8_defines(FloatFormat format, const W8A8Config& config);

class QuantizePerToken
{
public:
  explicit QuantizePerToken(FloatFormat format, W8A8Config config = {});
  Defines defines() const;
  LaunchGeometry geometry(std::size_t rows) const;
  // x: [rows][cols] float; q: int8 [rows][cols]; scales: float [rows]
  Status run(Session& session, std::size_t rows, std::size_t cols, const DeviceBuffer& x,
             const DeviceBuffer& q, const DeviceBuffer& scales) const;
  static QuantizedRows reference(std::size_t rows, std::size_t cols, std::span<const float> x)
  {
    return quantize_rows(rows, cols, x);
  }

private:
  FloatFormat m_format;
  W8A8Config m_config;
};

// The int8 product both W8A8 kernels compute, in exact integers, dequantized in double.
std::vector<float> w8a8_reference(const LinearShape& shape, const QuantizedRows& activations,
                                  const QuantizedRows& weights);

class W8A8Gemm
{
public:
  explicit W8A8Gemm(FloatFormat format, W8A8Config config = {});
  Defines defines() const;
  LaunchGeometry geometry(const LinearShape& shape) const;
  // a: int8 [rows][in], a_scales: float [rows], w: int8 [out][in], w_scales: float [out], y: [rows][out]
  Status run(Session& session, const LinearShape& shape, const DeviceBuffer& a, const DeviceBuffer& a_scales,
             const DeviceBuffer& w, const DeviceBuffer& w_scales, const DeviceBuffer& y) const;

private:
  FloatFormat m_format;
  W8A8Config m_config;
};

class W8A8Gemv
{
public:
  explicit W8A8Gemv(FloatFormat format, W8A8Config config = {});
  Defines defines() const;
  LaunchGeometry geometry(const LinearShape& shape) const;
  Status run(Session& session, const LinearShape& shape, const DeviceBuffer& a, const DeviceBuffer& a_scales,
             const DeviceBuffer& w, const DeviceBuffer& w_scales, const DeviceBuffer& y) const;

private:
  FloatFormat m_format;
  W8A8Config m_config;
};

} // namespace prewarm::engine::ops
