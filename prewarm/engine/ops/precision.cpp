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
FloatFormat::for_precision(Precision precision, const Session& session)
{
  return precision == Precision::fp32 ? fp32() : fp16_for(session);
}

Defines&
add_precision_defines(Defines& defines, FloatFormat format)
{
  if (format.storage == Storage::fp16) {
    defines.flag("PRECISION_FP16");
    if (format.compute == Compute::fp16) {
      defines.flag("COMPUTE_HALF");
    }
  }
  return defines;
}

std::string_view
to_string(FloatFormat format)
{
  if (format.storage == Storage::fp32) {
    return "fp32";
  }
  return format.compute == Compute::fp16 ? "fp16-compute" : "fp16-storage";
}

} // namespace prewarm::engine::ops
