// SPDX-License-Identifier: Apache-2.0
#include "engine/row_kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace prewarm::engine {

Status
run_softmax(Session& session, const SoftmaxArgs& args, const Defines& precision, int work_group)
{
  if (args.x == nullptr || args.rows <= 0 || args.cols <= 0 || args.period <= 0 || args.period > args.cols ||
      work_group <= 0 || (work_group & (work_group - 1)) != 0) {
    return fail(Errc::internal, fmt::format("softmax: invalid arguments (rows={} cols={} period={} work group={})", args.rows,
                                            args.cols, args.period, work_group));
  }
  Defines defines = precision;
  defines.set("WG", work_group);
  PW_ASSIGN(Kernel kernel, session.kernel("softmax.cl", "softmax_rows", defines));
  KernelArgs kernel_args;
  kernel_args.buffer(*args.x)
    .value(cl_int{args.rows})
    .value(cl_int{args.cols})
    .value(cl_float{args.scale})
    .value(cl_int{args.mask == CausalMask::causal ? 1 : 0})
    .value(cl_int{args.period});
  const auto wg = static_cast<std::size_t>(work_group);
  return session.launch(kernel, LaunchGeometry::linear(static_cast<std::size_t>(args.rows) * wg, wg), kernel_args);
}

void
reference_softmax(const SoftmaxArgs& args, float* x)
{
  for (int r = 0; r < args.rows; ++r) {
    float* row = x + static_cast<std::ptrdiff_t>(r) * args.cols;
    const int limit = args.mask == CausalMask::causal ? args.cols - args.period + (r % args.period) + 1 : args.cols;
    double peak = -std::numeric_limits<double>::infinity();
    for (int c = 0; c < limit; ++c) {
      peak = std::max(peak, static_cast<double>(args.scale) * row[c]);
    }
    double sum = 0;
    for (int c = 0; c < limit; ++c) {
      sum += std::exp(static_cast<double>(args.scale) * row[c] - peak);
    }
    for (int c = 0; c < args.cols; ++c) {
      row[c] = c < limit ? static_cast<float>(std::exp(static_cast<double>(args.scale) * row[c] - peak) / sum) : 0.0f;
    }
  }
}

Status
run_rmsnorm(Session& session, const RmsNormArgs& args, const Defines& precision, int work_group)
{
  if (args.x == nullptr || args.weight == nullptr || args.out == nullptr || args.rows <= 0 || args.cols <= 0 ||
      work_group <= 0 || (work_group & (work_group - 1)) != 0) {
    return fail(Errc::internal,
                fmt::format("rmsnorm: invalid arguments (rows={} cols={} work group={})", args.rows, args.cols, work_group));
  }
  Defines defines = precision;
  defines.set("WG", work_group);
  PW_ASSIGN(Kernel kernel, session.kernel("rmsnorm.cl", "rmsnorm", defines));
  KernelArgs kernel_args;
  kernel_args.buffer(*args.x)
    .buffer(*args.weight)
    .buffer(*args.out)
    .value(cl_int{args.rows})
    .value(cl_int{args.cols})
    .value(cl_float{args.eps});
  const auto wg = static_cast<std::size_t>(work_group);
  return session.launch(kernel, LaunchGeometry::linear(static_cast<std::size_t>(args.rows) * wg, wg), kernel_args);
}

void
reference_rmsnorm(const RmsNormArgs& args, const float* x, const float* weight, float* out)
{
  for (int r = 0; r < args.rows; ++r) {
    const float* in_row = x + static_cast<std::ptrdiff_t>(r) * args.cols;
    float* out_row = out + static_cast<std::ptrdiff_t>(r) * args.cols;
    double sum = 0;
    for (int c = 0; c < args.cols; ++c) {
      sum += static_cast<double>(in_row[c]) * in_row[c];
    }
    const double inv_rms = 1.0 / std::sqrt(sum / args.cols + args.eps);
    for (int c = 0; c < args.cols; ++c) {
      out_row[c] = static_cast<float>(in_row[c] * inv_rms * weight[c]);
    }
  }
}

} // namespace prewarm::engine
