// SPDX-License-Identifier: Apache-2.0
// Module creation with a fallback: a native binary (an ocloc zebin made ahead
// of time) is tried first with ZE_MODULE_FORMAT_NATIVE; if the driver rejects
// it (wrong device, newer zeInfo than the driver decodes, corrupt file), the
// reason is logged and the module is built from SPIR-V instead. A failed
// native load never fails the caller while SPIR-V is there.
#pragma once

#include "base/error.hpp"
#include "level_zero/owned.hpp"

#include <level_zero/ze_api.h>

#include <string>
#include <string_view>

namespace prewarm::level_zero {

struct ModuleInputs
{
  std::string_view native;     // zebin bytes; empty = none
  std::string_view spirv;      // SPIR-V bytes; empty = none
  std::string build_flags;     // for the SPIR-V build ("-ze-opt-level=2"); native ignores them
  std::string label;           // for messages: "gemm.cl [-DTILE=16]"
};

enum class ModuleOrigin { native, spirv };
std::string_view to_string(ModuleOrigin origin); // "native", "spirv"

struct LoadedModule
{
  UniqueModule module;
  ModuleOrigin origin = ModuleOrigin::spirv;
  // Why the native binary was not used, when there was one: the driver's
  // result and build log. Empty when native loaded or none was offered.
  std::string fallback_reason;
};

// Errors only when no module could be made: no inputs, or SPIR-V that fails
// to build (with the build log), or a rejected native binary and no SPIR-V.
Result<LoadedModule> load_module(ze_context_handle_t context,
                                 ze_device_handle_t device,
                                 const ModuleInputs& inputs);

} // namespace prewarm::level_zero
