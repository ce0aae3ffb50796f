// SPDX-License-Identifier: Apache-2.0
// How an op stores and computes floating-point tensors, and the -D defines
// that select the matching kernel variant (the prelude of every kernels/*.cl
// reads them):
//   fp32                     (no define)
//   fp16, device without cl_khr_fp16   -DPRECISION_FP16               store half, compute float
//   fp16, device with cl_khr_fp16      -DPRECISION_FP16 -DCOMPUTE_HALF store half, compute half
// Quantized ops (W8A8, GPTQ int4) keep their float inputs/outputs in one of
// these formats too; their integer parts are described by the op itself.
#pragma once

#include "engine/architecture.hpp"
#include "engine/defines.hpp"

#include <cstddef>
#include <string_view>

namespace prewarm::engine {
class Session;
}

namespace prewarm::engine::ops {

enum class Storage { fp32, fp16 };
enum class Compute { fp32, fp16 };

struct FloatFormat
{
  Storage storage = Storage::fp32;
  Compute compute = Compute::fp32;

  static FloatFormat fp32() { return {}; }
  // Half storage; half compute only where the device has cl_khr_fp16.
  static FloatFormat fp16_for(const Session& session);
  // For a model precision: fp32 -> fp32; fp16 and int8 (W8A8 keeps its float
  // activations in half between the quantized layers) -> fp16_for(session).
  static FloatFormat for_precision(Precision precision, const Session& session);

  std::size_t element_bytes() const { return storage == Storage::fp16 ? 2 : 4; }
  friend bool operator==(const FloatFormat&, const FloatFormat&) = default;
};

// Adds PRECISION_FP16 / COMPUTE_HALF to `defines` as `format` asks.
Defines& add_precision_defines(Defines& defines, FloatFormat format);

// "fp32", "fp16-storage", "fp16-compute"
std::string_view to_string(FloatFormat format);

} // namespace prewarm::engine::ops
