// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace prewarm::engine::ops {

Tolerance
tolerance_for(FloatFormat format, Quantization quantization)
{
  Tolerance base{1e-4, 1e-4};
  switch (format.storage) {
  case Storage::fp32:
    break;
  case Storage::fp16:
    base = format.compute == Compute::fp16 ? Tolerance{1e-2, 1e-2} : Tolerance{2e-3, 2e-3};
    break;
  case Storage::bf16: // ~2 roundings of 2^-8 (8 significant bits), see the header
    base = Tolerance{8e-3, 8e-3};
    break;
  }
  Tolerance quantized{0, 0};
  switch (quantization) {
  case Quantization::none:
    break;
  case Quantization::w8a8:
  case Quantization::gptq_int4:
    quantized = {2e-3, 2e-3};
    break;
  }
  return {std::max(base.abs, quantized.abs), std::max(base.rel, quantized.rel)};
}

std::string
Comparison::summary() const
{
  return fmt::format("max abs {:.3g}, max rel {:.3g}, {} of {} mismatches",
                     max_abs_error, max_rel_error, mismatches, count);
}

Comparison
compare(std::span<const float> got, std::span<const float> want, Tolerance tolerance)
{
  Comparison result;
  const std::size_t n = std::min(got.size(), want.size());
  result.count = n;
  for (std::size_t i = 0; i < n; ++i) {
    result.peak = std::max(result.peak, std::abs(static_cast<double>(want[i])));
  }
  double worst_excess = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) {
    const double w = want[i];
    const double g = got[i];
    const double error = std::isnan(g) != std::isnan(w) ? INFINITY : std::abs(g - w);
    const double allowed = tolerance.abs * result.peak + tolerance.rel * std::abs(w);
    result.max_abs_error = std::max(result.max_abs_error, std::isnan(error) ? 0.0 : error);
    const double rel = error / std::max(std::abs(w), result.peak * 1e-3);
    result.max_rel_error = std::max(result.max_rel_error, std::isnan(rel) ? 0.0 : rel);
    if (!(error <= allowed) && !(std::isnan(g) && std::isnan(w))) {
      ++result.mismatches;
    }
    const double excess = error - allowed;
    if (excess > worst_excess) {
      worst_excess = excess;
      result.worst_index = i;
    }
  }
  return result;
}

Status
check_close(std::string_view what,
            std::span<const float> got,
            std::span<const float> want,
            Tolerance tolerance)
{
  if (got.size() != want.size()) {
    return fail(Errc::failed,
                fmt::format("{}: device output has {} elements, the reference {}", what,
                            got.size(), want.size()),
                "E_OP_SHAPE");
  }
  const Comparison c = compare(got, want, tolerance);
  if (!c.passed()) {
    return fail(Errc::failed,
                fmt::format("{}: device output differs from the CPU reference: element {} is {} "
                            "instead of {} (tolerance abs {:g} x peak {:g} + rel {:g}); {}",
                            what, c.worst_index, got[c.worst_index], want[c.worst_index],
                            tolerance.abs, c.peak, tolerance.rel, c.summary()),
                "E_OP_MISMATCH");
  }
  return {};
}

} // namespace prewarm::engine::ops
