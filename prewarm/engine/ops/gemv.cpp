// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/gemv.hpp"

#include "engine/ops/device_tensor.hpp"

namespace prewarm::engine::ops {

std::vector<float>
linear_reference(const LinearShape& shape, std::span<const float> x, std::span<const float> w)
{
  std::vector<float> y(shape.rows * shape.out);
  for (std::size_t m = 0; m < shape.rows; ++m) {
    for (std::size_t n = 0; n < shape.out; ++n) {
      double sum = 0;
      for (std::size_t k = 0; k < shape.in; ++k) {
        sum += static_cast<double>(x[m * shape.in + k]) * static_cast<double>(w[n * shape.in + k]);
      }
      y[m * shape.out + n] = static_cast<float>(sum);
    }
  }
  return y;
}

Gemv::Gemv(FloatFormat format, std::size_t local_size) : m_format(format), m_local_size(local_size) {}

Defines
Gemv::defines() const
{
  Defines defines;
  add_precision_defines(defines, m_format);
  defines.set("LOCAL_SIZE", static_cast<std::int64_t>(m_local_size));
  return defines;
}

LaunchGeometry
Gemv::geometry(const LinearShape& shape) const
{
  return LaunchGeometry::grid(shape.out * m_local_size, shape.rows, m_local_size, 1);
}

Status
Gemv::run(Session& session, const LinearShape& shape, const DeviceBuffer& x, const DeviceBuffer& w,
          const DeviceBuffer& y) const
{
  const std::size_t e = m_format.element_bytes();
  PW_TRY(require_shape("gemv", shape.rows > 0 && shape.out > 0 && shape.in > 0,
                       "rows, out and in must be positive"));
  PW_TRY(require_bytes("gemv", "x", x, shape.rows * shape.in * e));
  PW_TRY(require_bytes("gemv", "w", w, shape.out * shape.in * e));
  PW_TRY(require_bytes("gemv", "y", y, shape.rows * shape.out * e));
  PW_ASSIGN(Kernel kernel, session.kernel("gemv.cl", "gemv", defines()));
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(x).buffer(w).buffer(y)
                          .value(static_cast<cl_uint>(shape.out)).value(static_cast<cl_uint>(shape.in)));
}

} // namespace prewarm::engine::ops
