// SPDX-License-Identifier: Apache-2.0
// Serving ahead-of-time binaries on an Intel host: pick the AOT target for
// the device (pci-id, driver), load its zebin with ZE_MODULE_FORMAT_NATIVE,
// and on ANY mismatch (no target for this device, driver differs, no entry,
// binary rejected by the driver) build from SPIR-V instead, saying why.
#pragma once

#include "base/error.hpp"
#include "level_zero/aot_programs.hpp"
#include "level_zero/device.hpp"
#include "level_zero/module.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace prewarm::level_zero {

struct ServedModule
{
  LoadedModule loaded;
  std::string aot_key;     // the entry served (or tried); empty if none
  std::string aot_target;  // its ocloc device; empty if none
  // Why the module is not the AOT binary: selection/lookup reason, or the
  // driver's rejection. Empty when the AOT binary was loaded.
  std::string reason;
};

// `spirv_fallback` is used when the store has no SPIR-V for this program; it
// may be empty (then the store's SPIR-V of any target is tried, then
// `compile_spirv` when given).
Result<ServedModule> serve_module(ze_context_handle_t context,
                                  const ZeDeviceRef& device,
                                  const AotPrograms& programs,
                                  std::string_view source,
                                  std::string_view options,
                                  std::string_view spirv_fallback,
                                  std::string_view label,
                                  const std::function<Result<std::string>()>& compile_spirv = {});

} // namespace prewarm::level_zero
