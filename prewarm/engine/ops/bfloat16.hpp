// SPDX-License-Identifier: Apache-2.0
// bfloat16 conversions for the host side of bf16 buffers. A bf16 is the upper
// 16 bits of an IEEE 754 binary32: the same sign and 8-bit exponent, 7 stored
// significand bits (8 with the implicit one). Widening is exact; narrowing
// rounds to nearest, ties to even, exactly as the STORE macro of the kernels'
// bf16 prelude (kernels/precision_prelude.clh), so host-rounded inputs and kernel-rounded
// outputs agree bit for bit. NaNs stay NaNs (quiet); there are no bf16-only
// special cases: float's subnormals and infinities carry over.
#pragma once

#include <cstdint>

namespace prewarm::engine::ops {

std::uint16_t float_to_bf16(float value);
float bf16_to_float(std::uint16_t bits);

} // namespace prewarm::engine::ops
