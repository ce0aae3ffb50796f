// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/elementwise.hpp"

#include "engine/ops/device_tensor.hpp"

#include <cmath>
#include <cstdint>

namespace prewarm::engine::ops {

namespace {

Defines
format_defines(FloatFormat format)
{
  Defines defines;
  add_precision_defines(defines, format);
  return defines;
}

LaunchGeometry
flat_geometry(std::size_t count, std::size_t local_size)
{
  return LaunchGeometry::linear(round_up(std::max<std::size_t>(count, 1), local_size), local_size);
}

Status
require_count(std::string_view op, std::size_t count)
{
  return require_shape(op, count <= UINT32_MAX, "more than 2^32 elements");
}

} // namespace

ResidualAdd::ResidualAdd(FloatFormat format, std::size_t local_size)
  : m_format(format), m_local_size(local_size)
{
}

Defines
ResidualAdd::defines() const
{
  return format_defines(m_format);
}

LaunchGeometry
ResidualAdd::geometry(std::size_t count) const
{
  return flat_geometry(count, m_local_size);
}

Status
ResidualAdd::run(Session& session, std::size_t count, const DeviceBuffer& a, const DeviceBuffer& b,
                 const DeviceBuffer& out) const
{
  const std::size_t bytes = count * m_format.element_bytes();
  PW_TRY(require_count("residual_add", count));
  PW_TRY(require_bytes("residual_add", "a", a, bytes));
  PW_TRY(require_bytes("residual_add", "b", b, bytes));
  PW_TRY(require_bytes("residual_add", "out", out, bytes));
  PW_ASSIGN(Kernel kernel, session.kernel(elementwise_source, "residual_add", defines()));
  return session.launch(kernel, geometry(count),
                        KernelArgs().buffer(a).buffer(b).buffer(out).value(static_cast<cl_uint>(count)));
}

std::vector<float>
ResidualAdd::reference(std::span<const float> a, std::span<const float> b)
{
  std::vector<float> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    out[i] = static_cast<float>(static_cast<double>(a[i]) + static_cast<double>(b[i]));
  }
  return out;
}

SiluMul::SiluMul(FloatFormat format, std::size_t local_size) : m_format(format), m_local_size(local_size)
{
}

Defines
SiluMul::defines() const
{
  return format_defines(m_format);
}

LaunchGeometry
SiluMul::geometry(std::size_t count) const
{
  return flat_geometry(count, m_local_size);
}

Status
SiluMul::run(Session& session, std::size_t count, const DeviceBuffer& gate, const DeviceBuffer& up,
             const DeviceBuffer& out) const
{
  const std::size_t bytes = count * m_format.element_bytes();
  PW_TRY(require_count("silu_mul", count));
  PW_TRY(require_bytes("silu_mul", "gate", gate, bytes));
  PW_TRY(require_bytes("silu_mul", "up", up, bytes));
  PW_TRY(require_bytes("silu_mul", "out", out, bytes));
  PW_ASSIGN(Kernel kernel, session.kernel(elementwise_source, "silu_mul", defines()));
  return session.launch(kernel, geometry(count),
                        KernelArgs().buffer(gate).buffer(up).buffer(out).value(static_cast<cl_uint>(count)));
}

std::vector<float>
SiluMul::reference(std::span<const float> gate, std::span<const float> up)
{
  std::vector<float> out(gate.size());
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * static_cast<double>(up[i]));
  }
  return out;
}

Gelu::Gelu(FloatFormat format, std::size_t local_size) : m_format(format), m_local_size(local_size) {}

Defines
Gelu::defines() const
{
  return format_defines(m_format);
}

LaunchGeometry
Gelu::geometry(std::size_t count) const
{
  return flat_geometry(count, m_local_size);
}

Status
Gelu::run(Session& session, std::size_t count, const DeviceBuffer& x, const DeviceBuffer& out) const
{
  const std::size_t bytes = count * m_format.element_bytes();
  PW_TRY(require_count("gelu", count));
  PW_TRY(require_bytes("gelu", "x", x, bytes));
  PW_TRY(require_bytes("gelu", "out", out, bytes));
  PW_ASSIGN(Kernel kernel, session.kernel(elementwise_source, "gelu", defines()));
  return session.launch(kernel, geometry(count),
                        KernelArgs().buffer(x).buffer(out).value(static_cast<cl_uint>(count)));
}

std::vector<float>
Gelu::reference(std::span<const float> x)
{
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    out[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
  }
  return out;
}

} // namespace prewarm::engine::ops
