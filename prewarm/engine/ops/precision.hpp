// SPDX-License-Identifier: Apache-2.0
// How an op stores and computes floating-point tensors, and the -D defines
// that select the matching kernel variant (kernels/precision_prelude.clh, which
// every kernels/*.cl includes, reads them):
//   fp32                     (no define)
//   fp16, device without cl_khr_fp16   -DPRECISION_FP16               store half, compute float
//   fp16, device with cl_khr_fp16      -DPRECISION_FP16 -DCOMPUTE_HALF store half, compute half
//   bf16, any device                   -DPRECISION_BF16               store bf16 (ushort), compute float
// bf16 never computes in bf16: OpenCL has no bf16 arithmetic without vendor
// extensions, and inference libraries widen bf16 to float for the math too.
// Quantized ops (W8A8, GPTQ int4) keep their float inputs/outputs in one of
// these formats too; their integer parts are described by the op itself.
#pragma once

#include "engine/defines.hpp"
#include "engine/ops/model_names.hpp"

#include <cstddef>
#include <string_view>

namespace prewarm::engine {
class Session;
}

namespace prewarm::engine::ops {

enum class Storage { fp32, fp16, bf16 };
enum class Compute { fp32, fp16 };

struct FloatFormat
{
  Storage storage = Storage::fp32;
  Compute compute = Compute::fp32;

  static FloatFormat fp32() { return {}; }
  static FloatFormat bf16() { return {.storage = Storage::bf16, .compute = Compute::fp32}; }
  // Half storage; half compute only where the device has cl_khr_fp16.
  static FloatFormat fp16_for(const Session& session);
  // For a model precision: fp32 -> fp32; bf16 -> bf16; fp16 and int8 (W8A8
  // keeps its float activations in half between the quantized layers) -> half
  // storage, computing in `half_compute` (Compute::fp16 where the device has
  // cl_khr_fp16).
  static FloatFormat for_precision(Precision precision, Compute half_compute);
  // The same for the session's device.
  static FloatFormat for_precision(Precision precision, const Session& session);

  std::size_t element_bytes() const { return storage == Storage::fp32 ? 4 : 2; }
  friend bool operator==(const FloatFormat&, const FloatFormat&) = default;
};

// Adds PRECISION_FP16 / COMPUTE_HALF / PRECISION_BF16 to `defines` as `format` asks.
Defines& add_precision_defines(Defines& defines, FloatFormat format);

// "fp32", "fp16-storage", "fp16-compute", "bf16"
std::string_view to_string(FloatFormat format);

} // namespace prewarm::engine::ops
