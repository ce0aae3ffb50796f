// SPDX-License-Identifier: Apache-2.0
#include "level_zero/aot_serving.hpp"

#include "base/log.hpp"

namespace prewarm::level_zero {

Result<ServedModule>
serve_module(ze_context_handle_t context, const ZeDeviceRef& device, const AotPrograms& programs,
             std::string_view source, std::string_view options, std::string_view spirv_fallback,
             std::string_view label, const std::function<Result<std::string>()>& compile_spirv)
{
  ServedModule served;
  ModuleInputs inputs;
  inputs.label = std::string(label);
  std::string store_spirv;

  const auto selection = programs.select(device.properties);
  if (selection.target != nullptr) {
    served.aot_target = selection.target->ocloc_device;
    auto lookup = programs.find(*selection.target, source, options);
    if (lookup.program) {
      served.aot_key = lookup.program->key;
      store_spirv = std::move(lookup.program->spirv);
      PW_ASSIGN(served.loaded, [&] {
        inputs.native = lookup.program->zebin;
        inputs.spirv = store_spirv.empty() ? spirv_fallback : std::string_view(store_spirv);
        return load_module(context, device.device, inputs);
      }());
      served.reason = served.loaded.fallback_reason;
      return served;
    }
    served.reason = lookup.reason;
  } else {
    served.reason = selection.reason;
  }

  // No AOT binary for this device: JIT from SPIR-V, logged so that a missing
  // or mismatched bundle is visible rather than silently slow.
  if (spirv_fallback.empty()) {
    store_spirv = programs.find_any_spirv(source, options);
  }
  if (spirv_fallback.empty() && store_spirv.empty() && compile_spirv) {
    PW_ASSIGN_CTX(store_spirv, std::string(label) + ": SPIR-V", compile_spirv());
  }
  inputs.spirv = spirv_fallback.empty() ? std::string_view(store_spirv) : spirv_fallback;
  if (inputs.spirv.empty()) {
    return fail(Errc::failed, std::string(label) + ": " + served.reason + ", and no SPIR-V to build from");
  }
  // A device no target serves says so for every program (the caller says it
  // once): only worth a verbose line. A selected target that misses is news.
  if (served.aot_target.empty()) {
    log::verbose("{}: {}; building from SPIR-V", label, served.reason);
  } else {
    log::info("{}: {}; building from SPIR-V", label, served.reason);
  }
  PW_ASSIGN(served.loaded, load_module(context, device.device, inputs));
  return served;
}

} // namespace prewarm::level_zero
