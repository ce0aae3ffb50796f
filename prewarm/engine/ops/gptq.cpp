// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/gptq.hpp"

#include "engine/ops/device_tensor.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <fmt/format.h>
#include <numeric>

namespace prewarm::engine::ops {

unsigned
GptqWeights::weight(std::size_t k, std::size_t n) const
{
  return (qweight[(k / 8) * out + n] >> (4 * (k % 8))) & 0xFu;
}

unsigned
GptqWeights::zero(std::size_t group, std::size_t n) const
{
  return (qzeros[group * (out / 8) + n / 8] >> (4 * (n % 8))) & 0xFu;
}

namespace {

Status
check_gptq_shape(std::size_t in, std::size_t out, std::size_t group_size)
{
  if (in == 0 || out == 0 || group_size == 0 || in % 8 != 0 || out % 8 != 0 || group_size % 8 != 0) {
    return fail(Errc::failed,
                fmt::format("GPTQ layer {}x{} with group size {}: in, out and group size must be "
                            "positive multiples of 8 (8 nibbles per packed word)",
                            in, out, group_size),
                "E_OP_ARGUMENT");
  }
  return {};
}

} // namespace

Result<GptqWeights>
pack_gptq(std::size_t in, std::size_t out, std::size_t group_size, std::span<const std::uint8_t> q,
          std::span<const std::uint8_t> zeros, std::span<const float> scales,
          std::span<const std::int32_t> g_idx)
{
  PW_TRY(check_gptq_shape(in, out, group_size));
  GptqWeights w;
  w.in = in;
  w.out = out;
  w.group_size = group_size;
  const std::size_t groups = w.groups();
  if (q.size() != in * out || zeros.size() != groups * out || scales.size() != groups * out ||
      g_idx.size() != in) {
    return fail(Errc::failed,
                fmt::format("GPTQ layer {}x{}, {} groups: got {} weights, {} zeros, {} scales, {} g_idx "
                            "entries",
                            in, out, groups, q.size(), zeros.size(), scales.size(), g_idx.size()),
                "E_OP_ARGUMENT");
  }
  w.qweight.assign(in / 8 * out, 0);
  for (std::size_t k = 0; k < in; ++k) {
    for (std::size_t n = 0; n < out; ++n) {
      w.qweight[(k / 8) * out + n] |= static_cast<std::uint32_t>(q[k * out + n] & 0xF) << (4 * (k % 8));
    }
  }
  w.qzeros.assign(groups * out / 8, 0);
  for (std::size_t g = 0; g < groups; ++g) {
    for (std::size_t n = 0; n < out; ++n) {
      w.qzeros[g * (out / 8) + n / 8] |= static_cast<std::uint32_t>(zeros[g * out + n] & 0xF) << (4 * (n % 8));
    }
  }
  w.scales.assign(scales.begin(), scales.end());
  w.g_idx.assign(g_idx.begin(), g_idx.end());
  return w;
}

Result<GptqWeights>
random_gptq_weights(std::uint32_t seed, std::size_t in, std::size_t out, std::size_t group_size, GroupOrder order)
{
  PW_TRY(check_gptq_shape(in, out, group_size));
  std::mt19937 rng(seed);
  const std::size_t groups = (in + group_size - 1) / group_size;
  std::uniform_int_distribution<int> nibble(0, 15);
  const float typical = 1.0f / (6.0f * std::sqrt(static_cast<float>(in)));
  std::uniform_real_distribution<float> scale(0.5f * typical, 1.5f * typical);
  std::vector<std::uint8_t> q(in * out);
  std::vector<std::uint8_t> zeros(groups * out);
  std::vector<float> scales(groups * out);
  for (auto& v : q) {
    v = static_cast<std::uint8_t>(nibble(rng));
  }
  for (auto& v : zeros) {
    v = static_cast<std::uint8_t>(nibble(rng));
  }
  for (auto& v : scales) {
    v = scale(rng);
  }
  std::vector<std::int32_t> visit(in);
  std::iota(visit.begin(), visit.end(), 0);
  if (order == GroupOrder::act_order) {
    std::shuffle(visit.begin(), visit.end(), rng);
  }
  std::vector<std::int32_t> g_idx(in);
  for (std::size_t i = 0; i < in; ++i) {
    g_idx[static_cast<std::size_t>(visit[i])] = static_cast<std::int32_t>(i / group_size);
  }
  return pack_gptq(in, out, group_size, q, zeros, scales, g_idx);
}

Result<ActOrderWeights>
shuffle_for_act_order(const GptqWeights& weights)
{
  PW_TRY(check_gptq_shape(weights.in, weights.out, weights.group_size));
  const std::size_t groups = weights.groups();
  ActOrderWeights result;
  result.perm.resize(weights.in);
  std::iota(result.perm.begin(), result.perm.end(), 0);
  for (std::size_t k = 0; k < weights.in; ++k) {
    if (weights.g_idx[k] < 0 || static_cast<std::size_t>(weights.g_idx[k]) >= groups) {
      return fail(Errc::failed,
                  fmt::format("GPTQ g_idx[{}] = {} is outside 0 .. {}", k, weights.g_idx[k], groups - 1),
                  "E_GPTQ_G_IDX");
    }
  }
  std::stable_sort(result.perm.begin(), result.perm.end(),
                   [&](std::int32_t a, std::int32_t b) { return weights.g_idx[a] < weights.g_idx[b]; });
  for (std::size_t k = 0; k < weights.in; ++k) {
    const auto group = static_cast<std::size_t>(weights.g_idx[result.perm[k]]);
    if (group != k / weights.group_size) {
      return fail(Errc::failed,
                  fmt::format("GPTQ g_idx puts {} channels in group {}: every group but the last must "
                              "hold exactly group_size = {}",
                              std::count(weights.g_idx.begin(), weights.g_idx.end(),
                                         static_cast<std::int32_t>(group)),
                              group, weights.group_size),
                  "E_GPTQ_G_IDX");
    }
  }
  result.qweight.assign(weights.qweight.size(), 0);
  for (std::size_t k = 0; k < weights.in; ++k) {
    const auto source = static_cast<std::size_t>(result.perm[k]);
    for (std::size_t n = 0; n < weights.out; ++n) {
      result.qweight[(k / 8) * weights.out + n] |= static_cast<std::uint32_t>(weights.weight(source, n))
                                                   << (4 * (k % 8));
    }
  }
  return result;
}

GptqReorder::GptqReorder(FloatFormat format, std::size_t local_size) : m_format(format), m_local_size(local_size) {}

Defines
GptqReorder::defines() const
{
  Defines defines;
  add_precision_defines(defines, m_format);
  defines.set("LOCAL_SIZE", static_cast<std::int64_t>(m_local_size));
  return defines;
}

LaunchGeometry
GptqReorder::geometry(std::size_t rows, std::size_t in) const
{
  return LaunchGeometry::grid({in, rows, 1}, {0, 0, 0});
}

Status
GptqReorder::run(Session& session, std::size_t rows, std::size_t in, const DeviceBuffer& x,
                 const DeviceBuffer& perm, const DeviceBuffer& x_perm) const
{
  constexpr std::string_view op = "gptq_reorder_activations";
  PW_TRY(require_shape(op, rows > 0 && in > 0, "rows and in must be positive"));
  PW_TRY(require_bytes(op, "x", x, rows * in * m_format.element_bytes()));
  PW_TRY(require_bytes(op, "perm", perm, in * sizeof(cl_int)));
  PW_TRY(require_bytes(op, "x_perm", x_perm, rows * in * m_format.element_bytes()));
  PW_ASSIGN(Kernel kernel, session.kernel("gptq.cl", "gptq_reorder_activations", defines()));
  return session.launch(kernel, geometry(rows, in),
                        KernelArgs().buffer(x).buffer(perm).buffer(x_perm).value(static_cast<cl_uint>(in)));
}

std::vector<float>
GptqReorder::reference(std::size_t rows, std::size_t in, std::span<const float> x,
                       std::span<const std::int32_t> perm)
{
  std::vector<float> out(rows * in);
  for (std::size_t m = 0; m < rows; ++m) {
    for (std::size_t k = 0; k < in; ++k) {
      out[m * in + k] = x[m * in + static_cast<std::size_t>(perm[k])];
    }
  }
  return out;
}

GptqMatmul::GptqMatmul(FloatFormat format, std::size_t local_size) : m_format(format), m_local_size(local_size)
{
}

Defines
GptqMatmul::defines() const
{
  Defines defines;
  add_precision_defines(defines, m_format);
  defines.set("LOCAL_SIZE", static_cast<std::int64_t>(m_local_size));
  return defines;
}

LaunchGeometry
GptqMatmul::geometry(const LinearShape& shape) const
{
  return LaunchGeometry::grid(round_up(shape.out, m_local_size), shape.rows, m_local_size, 1);
}

Status
GptqMatmul::run(Session& session, const LinearShape& shape, std::size_t group_size, const DeviceBuffer& x_perm,
                const DeviceBuffer& qweight, const DeviceBuffer& scales, const DeviceBuffer& qzeros,
                const DeviceBuffer& y) const
{
  constexpr std::string_view op = "gptq_matmul";
  PW_TRY(require_shape(op, shape.rows > 0, "rows must be positive"));
  PW_TRY(check_gptq_shape(shape.in, shape.out, group_size));
  const std::size_t groups = (shape.in + group_size - 1) / group_size;
  const std::size_t e = m_format.element_bytes();
  PW_TRY(require_bytes(op, "x_perm", x_perm, shape.rows * shape.in * e));
  PW_TRY(require_bytes(op, "qweight", qweight, shape.in / 8 * shape.out * sizeof(cl_uint)));
  PW_TRY(require_bytes(op, "scales", scales, groups * shape.out * e));
  PW_TRY(require_bytes(op, "qzeros", qzeros, groups * shape.out / 8 * sizeof(cl_uint)));
  PW_TRY(require_bytes(op, "y", y, shape.rows * shape.out * e));
  PW_ASSIGN(Kernel kernel, session.kernel("gptq.cl", "gptq_matmul", defines()));
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(x_perm).buffer(qweight).buffer(scales).buffer(qzeros).buffer(y)
                          .value(static_cast<cl_uint>(shape.out)).value(static_cast<cl_uint>(shape.in))
                          .value(static_cast<cl_uint>(group_size)));
}

std::vector<float>
gptq_reference(std::size_t rows, std::span<const float> x, const GptqWeights& weights)
{
  std::vector<float> y(rows * weights.out);
  for (std::size_t m = 0; m < rows; ++m) {
    for (std::size_t n = 0; n < weights.out; ++n) {
      double sum = 0;
      for (std::size_t k = 0; k < weights.in; ++k) {
        const auto g = static_cast<std::size_t>(weights.g_idx[k]);
        const double w = (static_cast<double>(weights.weight(k, n)) - weights.zero(g, n)) *
                         static_cast<double>(weights.scales[g * weights.out + n]);
        sum += static_cast<double>(x[m * weights.in + k]) * w;
      }
      y[m * weights.out + n] = static_cast<float>(sum);
    }
  }
  return y;
}

} // namespace prewarm::engine::ops
