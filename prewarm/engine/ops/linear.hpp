// SPDX-License-Identifier: Apache-2.0
// A linear layer y = x W^T at a model precision, running the kernel a real
// engine picks for each phase:
//   precision  prefill (many rows)                 decode (a few rows)
//   fp32/fp16  gemm.cl (engine::run_gemm, tiled)   gemv.cl (Gemv)
//   int8       quantize_per_token + w8a8_gemm      quantize_per_token + w8a8_gemv
// Weights go to the device once (load); fp16 stores them in half, int8 quantizes
// them per output channel. reference() is the CPU result for the same stored
// weights and the same quantization steps, to check run() against.
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/ops/gemv.hpp"
#include "engine/ops/model_names.hpp"
#include "engine/ops/precision.hpp"
#include "engine/ops/tolerance.hpp"
#include "engine/ops/w8a8.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace prewarm::engine::ops {

// The GEMM tile the linears launch (engine/models/forward_programs.hpp lists
// the program it builds for ahead-of-time compilation).
inline constexpr int linear_gemm_tile = 16;

enum class Phase { prefill, decode };

class Linear
{
public:
  // w: float [out][in] on the host.
  static Result<Linear> load(Session& session, Precision precision, std::size_t out, std::size_t in,
                             std::span<const float> w);

  // x: [rows][in], y: [rows][out], both in format() storage.
  Status run(Session& session, Phase phase, std::size_t rows, const DeviceBuffer& x, const DeviceBuffer& y);

  // x as the device holds it (already in format() storage).
  std::vector<float> reference(std::size_t rows, std::span<const float> x) const;
  Tolerance tolerance() const;

  Precision precision() const { return m_precision; }
  FloatFormat format() const { return m_format; }
  std::size_t out() const { return m_out; }
  std::size_t in() const { return m_in; }

private:
  Linear() = default;
  Status ensure_scratch(Session& session, std::size_t rows);

  Precision m_precision = Precision::fp32;
  FloatFormat m_format;
  std::size_t m_out = 0;
  std::size_t m_in = 0;
  std::vector<float> m_host_weights; // float: as stored (rounded to storage); int8: unused
  QuantizedRows m_quantized;         // int8 only
  DeviceBuffer m_weights;
  DeviceBuffer m_weight_scales;      // int8 only
  DeviceBuffer m_activations;        // int8 only: per-token quantized x, grown on demand
  DeviceBuffer m_activation_scales;
  std::size_t m_scratch_rows = 0;
};

} // namespace prewarm::engine::ops
