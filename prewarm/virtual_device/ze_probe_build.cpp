// SPDX-License-Identifier: Apache-2.0
// prewarm-ze-probe-build: builds one tiny SPIR-V module on the first Level
// Zero GPU and executes nothing. `prewarm intel-profile` runs it with NEO's
// BinaryCacheTrace on, so that NEO writes beside its cache entry every input
// of the Level Zero key (internal options with bindless mode, platform,
// feature tables), as the card computes them.
//
// Like prewarm-cl-replay it may run under the Intel root's loader and
// libraries, so it links nothing but the Level Zero loader and the C++
// runtime.
//
// stdout, tab-separated:
//   device  <ze device name>  <driver version, decimal>  <device id, 0x%04x>
//   built   <seconds>
//   failed  <ze_result_t, hex>  <build log>
// Exit: 0 built; 1 the build failed; 2 usage or no GPU.
#include <level_zero/ze_api.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

// An OpenCL kernel that does nothing, as SPIR-V 1.0 words:
//   OpCapability Addresses; OpCapability Kernel; OpMemoryModel Physical64 OpenCL
//   OpEntryPoint Kernel %1 "prewarm_profile"
//   %2 = OpTypeVoid; %3 = OpTypeFunction %2
//   %1 = OpFunction %2 None %3; %4 = OpLabel; OpReturn; OpFunctionEnd
// Written out here rather than compiled at build time: a user's machine
// has no SPIR-V compiler, and the module's only job is to be built.
constexpr std::uint32_t k_module[] = {
  0x07230203, 0x00010000, 0x00000000, 5, 0,                    // header: magic, 1.0, generator, bound, schema
  0x00020011, 4,                                               // OpCapability Addresses
  0x00020011, 6,                                               // OpCapability Kernel
  0x0003000e, 2, 2,                                            // OpMemoryModel Physical64 OpenCL
  0x0007000f, 6, 1, 0x77657270, 0x5f6d7261, 0x666f7270, 0x00656c69, // OpEntryPoint Kernel %1 "prewarm_profile"
  0x00020013, 2,                                               // %2 = OpTypeVoid
  0x00030021, 3, 2,                                            // %3 = OpTypeFunction %2
  0x00050036, 2, 1, 0, 3,                                      // %1 = OpFunction %2 None %3
  0x000200f8, 4,                                               // %4 = OpLabel
  0x000100fd,                                                  // OpReturn
  0x00010038,                                                  // OpFunctionEnd
};

int
usage_error(const char* what)
{
  std::cerr << "prewarm-ze-probe-build: error: " << what << '\n';
  return 2;
}

} // namespace

int
main(int argc, char**)
{
  if (argc != 1) {
    return usage_error("E_USAGE: usage: prewarm-ze-probe-build (no arguments)");
  }
  if (zeInit(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS) {
    return usage_error("E_NO_DEVICE: zeInit found no GPU driver");
  }
  std::uint32_t count = 1;
  ze_driver_handle_t driver = nullptr;
  if (zeDriverGet(&count, &driver) != ZE_RESULT_SUCCESS || count == 0) {
    return usage_error("E_NO_DEVICE: no Level Zero driver");
  }
  count = 1;
  ze_device_handle_t device = nullptr;
  if (zeDeviceGet(driver, &count, &device) != ZE_RESULT_SUCCESS || count == 0) {
    return usage_error("E_NO_DEVICE: no Level Zero device");
  }
  ze_device_properties_t properties{};
  properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  ze_driver_properties_t driver_properties{};
  driver_properties.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
  if (zeDeviceGetProperties(device, &properties) != ZE_RESULT_SUCCESS ||
      zeDriverGetProperties(driver, &driver_properties) != ZE_RESULT_SUCCESS) {
    return usage_error("E_NO_DEVICE: device properties not readable");
  }
  char id[16];
  std::snprintf(id, sizeof id, "0x%04x", properties.deviceId & 0xffffu);
  std::cout << "device\t" << properties.name << '\t' << driver_properties.driverVersion << '\t' << id << std::endl;

  ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ze_context_handle_t context = nullptr;
  if (zeContextCreate(driver, &context_desc, &context) != ZE_RESULT_SUCCESS) {
    return usage_error("E_LEVEL_ZERO: zeContextCreate failed");
  }
  ze_module_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
  desc.inputSize = sizeof k_module;
  desc.pInputModule = reinterpret_cast<const std::uint8_t*>(k_module);
  desc.pBuildFlags = "";
  ze_module_handle_t module = nullptr;
  ze_module_build_log_handle_t log = nullptr;
  const auto started = std::chrono::steady_clock::now();
  const ze_result_t status = zeModuleCreate(context, device, &desc, &module, &log);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  if (status == ZE_RESULT_SUCCESS) {
    std::cout << "built\t" << took.count() << std::endl;
  } else {
    std::string text;
    std::size_t size = 0;
    if (log != nullptr && zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0) {
      text.resize(size);
      zeModuleBuildLogGetString(log, &size, text.data());
      while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) {
        text.pop_back();
      }
    }
    for (auto& c : text) {
      c = (c == '\t' || c == '\n') ? ' ' : c;
    }
    std::printf("failed\t0x%x\t%s\n", static_cast<unsigned>(status), text.c_str());
  }
  if (log != nullptr) {
    zeModuleBuildLogDestroy(log);
  }
  if (module != nullptr) {
    zeModuleDestroy(module);
  }
  zeContextDestroy(context);
  return status == ZE_RESULT_SUCCESS ? 0 : 1;
}
