// SPDX-License-Identifier: Apache-2.0
// A GPTQ 4-bit linear layer on the device: load() runs the act-order shuffle
// once and uploads the packed weights; run() permutes the activations by g_idx
// (GptqReorder, skipped when g_idx is already sequential) and multiplies
// (GptqMatmul). Prefill and decode use the same kernels, as exllama's
// reconstruct-free path does for small batches.
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/ops/gptq.hpp"
#include "engine/ops/precision.hpp"
#include "engine/ops/tolerance.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace prewarm::engine::ops {

enum class ActOrder { reorder, sequential }; // whether run() permutes activations

class GptqLayer
{
public:
  static Result<GptqLayer> load(Session& session, FloatFormat format, GptqWeights weights);

  // x: [rows][in] in checkpoint column order, y: [rows][out], in format() storage.
  Status run(Session& session, std::size_t rows, const DeviceBuffer& x, const DeviceBuffer& y);

  std::vector<float> reference(std::size_t rows, std::span<const float> x) const;
  Tolerance tolerance() const { return tolerance_for(m_format, Quantization::gptq_int4); }
  FloatFormat format() const { return m_format; }
  ActOrder act_order() const { return m_act_order; }
  const GptqWeights& weights() const { return m_weights; } // scales as stored on the device

private:
  GptqLayer() = default;

  FloatFormat m_format;
  GptqWeights m_weights;
  ActOrder m_act_order = ActOrder::reorder;
  DeviceBuffer m_qweight; // shuffled
  DeviceBuffer m_perm;
  DeviceBuffer m_scales;
  DeviceBuffer m_qzeros;
  DeviceBuffer m_x_perm; // grown on demand
  std::size_t m_x_perm_rows = 0;
};

} // namespace prewarm::engine::ops
