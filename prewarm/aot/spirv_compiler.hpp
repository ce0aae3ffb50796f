// SPDX-License-Identifier: Apache-2.0
// The engine's SPIR-V source for Level Zero (engine::SpirvCompiler): ocloc
// -spv_only for the device's PCI id (ocloc takes "0x56a5" for -device;
// SPIR-V from its front end carries target defines). ocloc is located at the
// first program that needs it, so a run served entirely from the AOT store
// never looks for it.
#pragma once

#include "engine/session.hpp"

namespace prewarm::aot {

engine::SpirvCompiler ocloc_spirv_compiler();

} // namespace prewarm::aot
