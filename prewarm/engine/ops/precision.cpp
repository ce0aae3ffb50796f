// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/precision.hpp"

#include "engine/session.hpp"

namespace prewarm::engine::ops {

FloatFormat
FloatFormat::fp16_for(const Session& session)
{
  return {.storage = Storage::fp16, .compute = session.has_fp16() ? Compute::fp16 : Compute::fp32};
}

FloatFormat
FloatFormat::for_precision(Precision precision, Compute half_compute)
{
  switch (precision) {
  case Precision::fp32:
    return fp32();
  case Precision::bf16:
    return bf16();
  case Precision::fp16:
  case Precision::int8:
    break;
  }
  return {.storage = Storage::fp16, .compute = half_compute};
}

FloatFormat
FloatFormat::for_precision(Precision precision, const Session& session)
{
  return for_precision(precision, session.has_fp16() ? Compute::fp16 : Compute::fp32);
}

Defines&
add_precision_defines(Defines& defines, FloatFormat format)
{
  switch (format.storage) {
  case Storage::fp32:
    break;
  case Storage::fp16:
    defines.flag("PRECISION_FP16");
    if (format.compute == Compute::fp16) {
      defines.flag("COMPUTE_HALF");
    }
    break;
  case Storage::bf16:
    defines.flag("PRECISION_BF16");
    break;
  }
  return defines;
}

std::string_view
to_string(FloatFormat format)
{
  switch (format.storage) {
  case Storage::fp32:
    return "fp32";
  case Storage::fp16:
    return format.compute == Compute::fp16 ? "fp16-compute" : "fp16-storage";
  case Storage::bf16:
    break;
  }
  return "bf16";
}

} // namespace prewarm::engine::ops
