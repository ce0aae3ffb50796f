// SPDX-License-Identifier: Apache-2.0
// Element-wise ops of a transformer block (kernels/elementwise.cl): residual
// add, SwiGLU's SiLU(gate) * up, exact GELU. Flat tensors of `count` elements,
// one work-item each, local size 128 (any divisor of the work-group limit works;
// 128 keeps a work-group within one NVIDIA SM partition's scheduling granule).
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "engine/ops/precision.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace prewarm::engine::ops {

inline constexpr std::string_view elementwise_source = "elementwise.cl";

class ResidualAdd
{
public:
  explicit ResidualAdd(FloatFormat format, std::size_t local_size = 128);
  Defines defines() const;
  LaunchGeometry geometry(std::size_t count) const;
  // out = a + b (out may alias a)
  Status run(Session& session, std::size_t count, const DeviceBuffer& a, const DeviceBuffer& b,
             const DeviceBuffer& out) const;
  static std::vector<float> reference(std::span<const float> a, std::span<const float> b);

private:
  FloatFormat m_format;
  std::size_t m_local_size;
};

class SiluMul
{
public:
  explicit SiluMul(FloatFormat format, std::size_t local_size = 128);
  Defines defines() const;
  LaunchGeometry geometry(std::size_t count) const;
  // out = gate / (1 + exp(-gate)) * up
  Status run(Session& session, std::size_t count, const DeviceBuffer& gate, const DeviceBuffer& up,
             const DeviceBuffer& out) const;
  static std::vector<float> reference(std::span<const float> gate, std::span<const float> up);

private:
  FloatFormat m_format;
  std::size_t m_local_size;
};

class Gelu
{
public:
  explicit Gelu(FloatFormat format, std::size_t local_size = 128);
  Defines defines() const;
  LaunchGeometry geometry(std::size_t count) const;
  // out = 0.5 x (1 + erf(x / sqrt 2))
  Status run(Session& session, std::size_t count, const DeviceBuffer& x, const DeviceBuffer& out) const;
  static std::vector<float> reference(std::span<const float> x);

private:
  FloatFormat m_format;
  std::size_t m_local_size;
};

} // namespace prewarm::engine::ops
