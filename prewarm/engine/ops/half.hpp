// SPDX-License-Identifier: Apache-2.0
// IEEE 754 binary16 conversions for the host side of fp16 buffers. Rounding is
// to nearest, ties to even: what vstore_half does in the default rounding mode,
// so host-rounded inputs and kernel-rounded outputs agree bit for bit.
#pragma once

#include <cstdint>

namespace prewarm::engine::ops {

std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);

} // namespace prewarm::engine::ops
