// SPDX-License-Identifier: Apache-2.0
// Per-precision tolerances for comparing an op's device output with its CPU
// reference, in one place, and the comparison itself.
//
// An element passes when |got - want| <= abs * peak + rel * |want|, where peak
// is the largest |want| of the tensor (at least 1). Scaling the absolute term by
// the peak lets one tolerance serve normalized activations and large logits:
// rounding errors grow with the magnitude of what was summed, not of each element.
//
//                      abs     rel     why
//   fp32               1e-4    1e-4    float sums in another order (K up to ~4k)
//   fp16 storage       2e-3    2e-3    output rounded to half (2^-11), inputs exact
//   fp16 compute       1e-2    1e-2    products and element-wise math rounded to half
//   bf16               8e-3    8e-3    output rounded to bf16: 8 significant bits, so one
//                                      rounding is up to u = 2^-8 (3.9e-3) relative, 8x
//                                      fp16's 2^-11; a bf16 op rounds once (inputs exact,
//                                      float math, one store), so 8e-3 ~ 2u allows that
//                                      rounding twice over (the op tests' worst: 3.9e-3);
//                                      bit-exact rounding is tested apart (Bf16Store)
//   + W8A8             2e-3    2e-3    at most a few activations one step apart where
//                                      the device's 127/max rounds differently
//   + GPTQ int4        2e-3    2e-3    scale * (dot - zero * sum) cancels
// A quantized op's tolerance is the larger of its float format's and its own.
#pragma once

#include "base/error.hpp"
#include "engine/ops/precision.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace prewarm::engine::ops {

struct Tolerance
{
  double abs = 0;
  double rel = 0;
};

enum class Quantization { none, w8a8, gptq_int4 };

Tolerance tolerance_for(FloatFormat format, Quantization quantization = Quantization::none);

struct Comparison
{
  double max_abs_error = 0;
  double max_rel_error = 0; // |got - want| / max(|want|, peak * 1e-3): tiny wants don't dominate
  double peak = 1;          // max(1, max |want|)
  std::size_t count = 0;
  std::size_t mismatches = 0;
  std::size_t worst_index = 0; // largest excess over the allowed error (or error if none fail)
  bool passed() const { return mismatches == 0; }
  std::string summary() const; // "max abs 1.2e-05, max rel 3.4e-06, 0 of 4096 mismatches"
};

Comparison compare(std::span<const float> got, std::span<const float> want, Tolerance tolerance);

// compare(), as a Status: E_OP_MISMATCH naming `what`, the worst element (index,
// got, want) and the summary; sizes that differ are E_OP_SHAPE.
Status check_close(std::string_view what,
                   std::span<const float> got,
                   std::span<const float> want,
                   Tolerance tolerance);

} // namespace prewarm::engine::ops
