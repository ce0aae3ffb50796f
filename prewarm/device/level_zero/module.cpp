// SPDX-License-Identifier: Apache-2.0
#include "level_zero/module.hpp"

#include "base/log.hpp"
#include "level_zero/check.hpp"
#include "level_zero/device.hpp"

#include <fmt/format.h>

namespace prewarm::level_zero {

std::string_view
to_string(ModuleOrigin origin)
{
  return origin == ModuleOrigin::native ? "native" : "spirv";
}

namespace {

std::string
build_log_text(ze_module_build_log_handle_t handle)
{
  UniqueBuildLog log(handle);
  if (!log) {
    return {};
  }
  size_t size = 0;
  if (zeModuleBuildLogGetString(log.get(), &size, nullptr) != ZE_RESULT_SUCCESS || size == 0) {
    return {};
  }
  std::string text(size, '\0');
  if (zeModuleBuildLogGetString(log.get(), &size, text.data()) != ZE_RESULT_SUCCESS) {
    return {};
  }
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) {
    text.pop_back();
  }
  return text;
}

struct Attempt
{
  UniqueModule module;
  ze_result_t result = ZE_RESULT_SUCCESS;
  std::string log;
};

Attempt
create(ze_context_handle_t context, ze_device_handle_t device, ze_module_format_t format,
       std::string_view bytes, const std::string& flags)
{
  ze_module_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  desc.format = format;
  desc.inputSize = bytes.size();
  desc.pInputModule = reinterpret_cast<const uint8_t*>(bytes.data());
  desc.pBuildFlags = flags.c_str();
  ze_module_handle_t module = nullptr;
  ze_module_build_log_handle_t log = nullptr;
  Attempt attempt;
  // See loader_wraps_handles(): no build log where the loader would hand back
  // an unwrapped one on failure. The result code still says what failed.
  attempt.result = zeModuleCreate(context, device, &desc, &module, loader_wraps_handles() ? nullptr : &log);
  attempt.log = build_log_text(log);
  if (attempt.result == ZE_RESULT_SUCCESS) {
    attempt.module.reset(module);
  } else if (module != nullptr) {
    (void)zeModuleDestroy(module);
  }
  return attempt;
}

} // namespace

Result<LoadedModule>
load_module(ze_context_handle_t context, ze_device_handle_t device, const ModuleInputs& inputs)
{
  LoadedModule loaded;
  if (!inputs.native.empty()) {
    auto attempt = create(context, device, ZE_MODULE_FORMAT_NATIVE, inputs.native, "");
    if (attempt.result == ZE_RESULT_SUCCESS) {
      loaded.module = std::move(attempt.module);
      loaded.origin = ModuleOrigin::native;
      // A zebin of another device or driver that carries its SPIR-V (ocloc's
      // default) is not rejected: NEO compiles the IR instead and says so in
      // the build log only (measured with 26.27: "warning: module got
      // recompiled from IR because provided native binary is incompatible
      // with underlying device and/or driver [-Wrecompiled-from-ir]"). The
      // module is right, but it is a JIT build, not the AOT binary.
      if (const auto at = attempt.log.find("recompiled from IR"); at != std::string::npos) {
        const auto begin = attempt.log.rfind('\n', at);
        const auto end = attempt.log.find('\n', at);
        loaded.origin = ModuleOrigin::spirv;
        loaded.fallback_reason = fmt::format(
          "native binary not for this device: the driver compiled its IR instead ({})",
          attempt.log.substr(begin == std::string::npos ? 0 : begin + 1,
                             end == std::string::npos ? std::string::npos : end - (begin == std::string::npos ? 0 : begin + 1)));
        log::warn("{}: {}", inputs.label, loaded.fallback_reason);
      }
      return loaded;
    }
    loaded.fallback_reason = fmt::format("native binary rejected: {}{}{}", result_name(attempt.result),
                                         attempt.log.empty() ? "" : ": ", attempt.log);
    if (inputs.spirv.empty()) {
      return fail(Errc::failed, fmt::format("{}: {} and no SPIR-V to fall back to", inputs.label,
                                            loaded.fallback_reason));
    }
    log::warn("{}: {}; building from SPIR-V instead", inputs.label, loaded.fallback_reason);
  }
  if (inputs.spirv.empty()) {
    return fail(Errc::internal, fmt::format("{}: neither a native binary nor SPIR-V given", inputs.label));
  }
  auto attempt = create(context, device, ZE_MODULE_FORMAT_IL_SPIRV, inputs.spirv, inputs.build_flags);
  if (attempt.result != ZE_RESULT_SUCCESS) {
    return fail(Errc::failed, fmt::format("{}: zeModuleCreate from SPIR-V failed: {}{}{}", inputs.label,
                                          result_name(attempt.result), attempt.log.empty() ? "" : "\n",
                                          attempt.log));
  }
  loaded.module = std::move(attempt.module);
  loaded.origin = ModuleOrigin::spirv;
  return loaded;
}

} // namespace prewarm::level_zero
