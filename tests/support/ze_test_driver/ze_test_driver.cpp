// SPDX-License-Identifier: Apache-2.0
// TEST DOUBLE, NOT A GPU DRIVER. A Level Zero driver library that the real
// loader (libze_loader 1.8.12) loads with ZE_ENABLE_ALT_DRIVERS=<this .so>.
// It reports ONE fake Intel device named "prewarm test double (not a GPU)",
// accepts modules, rejects native binaries that are not a zebin for its
// device (so the SPIR-V fallback can be tested), and "runs" kernels by
// recording the launch. It never executes GPU code; memory is host memory and
// copies are memcpy. Nothing it does says anything about real hardware.
//
// The loader refuses a driver (zeInit -> 0x78000001) unless every
// ze/zet/zesGet*ProcAddrTable entry point it asks for is exported, so all 53
// of the 1.8.12 headers are; the ones for APIs this double does not implement
// hand back an empty table (the loader then answers "unsupported").
//
// Environment:
//   PREWARM_ZE_TEST_DEVICE_ID       PCI device id, "0x56a5" (default 0x56a5)
//   PREWARM_ZE_TEST_PRODUCT_FAMILY  decimal product family a native zebin must carry in
//                                   its .note.intelgt.compat note (type 1), e.g. 1270
//                                   (what ocloc 22.43 writes for acm-g10/acm-g11). Unset:
//                                   any zebin is accepted.
//   PREWARM_ZE_TEST_DRIVER_VERSION  "22.43.24595" (default), reported in NEO's encoding
//                                   (major << 24 | minor << 16 | build & 0xffff)
//   PREWARM_ZE_TEST_LOG             file to append one line per recorded call
//   PREWARM_ZE_TEST_DEVICE_COUNT    0 hides the device (default 1)
//
// Log lines (space-separated key=value after the event name):
//   init
//   module-create format=native|spirv size=N sha256=HEX flags="..." result=accepted kernels=a,b
//   module-create format=native size=N sha256=HEX flags="" result=rejected reason="..."
//   kernel-create name=K
//   launch kernel=K groups=X,Y,Z group-size=X,Y,Z args=N list=immediate|regular
//   copy bytes=N
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_api.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_api.h>
#include <level_zero/zet_ddi.h>

#include <openssl/evp.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

// ---------------------------------------------------------------- settings
std::string
env_or(const char* name, const char* fallback)
{
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

uint32_t
device_id()
{
  return static_cast<uint32_t>(std::strtoul(env_or("PREWARM_ZE_TEST_DEVICE_ID", "0x56a5").c_str(), nullptr, 0));
}

std::optional<uint32_t>
expected_product_family()
{
  const char* value = std::getenv("PREWARM_ZE_TEST_PRODUCT_FAMILY");
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  return static_cast<uint32_t>(std::strtoul(value, nullptr, 0));
}

uint32_t
encoded_driver_version()
{
  unsigned major = 0, minor = 0, build = 0;
  std::sscanf(env_or("PREWARM_ZE_TEST_DRIVER_VERSION", "22.43.24595").c_str(), "%u.%u.%u", &major, &minor, &build);
  return ((major & 0xffu) << 24) | ((minor & 0xffu) << 16) | (build & 0xffffu);
}

// ---------------------------------------------------------------- log
std::mutex g_log_mutex;

void
log_line(const std::string& line)
{
  const char* path = std::getenv("PREWARM_ZE_TEST_LOG");
  if (path == nullptr || *path == '\0') {
    return;
  }
  std::scoped_lock lock(g_log_mutex);
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    return;
  }
  std::string text = line + "\n";
  [[maybe_unused]] auto written = ::write(fd, text.data(), text.size());
  ::close(fd);
}

std::string
sha256_hex(const void* data, size_t size)
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data, size, digest, &length, EVP_sha256(), nullptr) != 1) {
    return "error";
  }
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < length; ++i) {
    hex += k_hex[digest[i] >> 4];
    hex += k_hex[digest[i] & 15];
  }
  return hex;
}

std::string
quoted(std::string_view text)
{
  std::string out = "\"";
  for (char c : text) {
    out += (c == '"' || c == '\n') ? '\'' : c;
  }
  return out + "\"";
}

// ---------------------------------------------------------------- objects
// Every handle is a pointer to one of these; the loader (1.8.12, one driver)
// passes them through unchanged.
struct DriverObject { int unused = 0; };
struct DeviceObject { int unused = 0; };
DriverObject g_driver;
DeviceObject g_device;

struct ContextObject { int unused = 0; };

struct ModuleObject
{
  ze_module_format_t format = ZE_MODULE_FORMAT_IL_SPIRV;
  std::string bytes;
  std::vector<std::string> kernels;
};

struct BuildLogObject
{
  std::string text;
};

struct KernelObject
{
  ModuleObject* module = nullptr;
  std::string name;
  std::map<uint32_t, std::string> args;
  uint32_t group_size[3] = {1, 1, 1};
};

struct CommandListObject
{
  bool immediate = false;
  std::vector<std::function<void()>> commands;
};

struct QueueObject { int unused = 0; };
struct FenceObject { bool signaled = false; };

template<typename Handle, typename Object>
Object*
as(Handle handle)
{
  return reinterpret_cast<Object*>(handle);
}

// ---------------------------------------------------------------- binary inspection
uint16_t
read_u16(const std::string& b, size_t at)
{
  return static_cast<uint16_t>(static_cast<unsigned char>(b[at]) | (static_cast<unsigned char>(b[at + 1]) << 8));
}
uint32_t
read_u32(const std::string& b, size_t at)
{
  return static_cast<uint32_t>(read_u16(b, at)) | (static_cast<uint32_t>(read_u16(b, at + 2)) << 16);
}
uint64_t
read_u64(const std::string& b, size_t at)
{
  return static_cast<uint64_t>(read_u32(b, at)) | (static_cast<uint64_t>(read_u32(b, at + 4)) << 32);
}

// Checks what NEO checks first for a zebin: ELF64, e_machine EM_INTELGT (205),
// and the product family note. Returns the reason for a rejection, or the
// kernel names (from the ".text.<kernel>" sections).
std::optional<std::string>
inspect_zebin(const std::string& b, std::vector<std::string>& kernels)
{
  if (b.size() < 64 || b.compare(0, 4, "\x7f" "ELF") != 0 || b[4] != 2) {
    return "not an ELF64 file";
  }
  if (read_u16(b, 18) != 205) {
    return "ELF e_machine is " + std::to_string(read_u16(b, 18)) + ", not 205 (Intel GT): not a zebin";
  }
  const uint64_t shoff = read_u64(b, 0x28);
  const uint16_t shentsize = read_u16(b, 0x3a);
  const uint16_t shnum = read_u16(b, 0x3c);
  const uint16_t shstrndx = read_u16(b, 0x3e);
  if (shentsize < 64 || shstrndx >= shnum || shoff + uint64_t{shnum} * shentsize > b.size()) {
    return "section header table out of bounds";
  }
  auto section = [&](uint16_t i) { return shoff + uint64_t{i} * shentsize; };
  const uint64_t strtab = read_u64(b, section(shstrndx) + 0x18);
  std::optional<uint32_t> product_family;
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t name_at = strtab + read_u32(b, section(i));
    if (name_at >= b.size()) {
      return "section name out of bounds";
    }
    const std::string name(b.c_str() + name_at);
    const uint64_t offset = read_u64(b, section(i) + 0x18);
    const uint64_t size = read_u64(b, section(i) + 0x20);
    if (offset + size > b.size()) {
      return "section " + name + " out of bounds";
    }
    if (name.starts_with(".text.")) {
      kernels.push_back(name.substr(6));
    }
    if (name == ".note.intelgt.compat") {
      for (uint64_t at = offset; at + 12 <= offset + size;) {
        const uint32_t name_size = read_u32(b, at), desc_size = read_u32(b, at + 4), type = read_u32(b, at + 8);
        const uint64_t desc = at + 12 + ((name_size + 3) & ~3u);
        if (desc + desc_size > offset + size) {
          break;
        }
        if (type == 1 && desc_size >= 4) {
          product_family = read_u32(b, desc);
        }
        at = desc + ((desc_size + 3) & ~3u);
      }
    }
  }
  if (auto expected = expected_product_family()) {
    if (!product_family) {
      return "zebin has no product family note";
    }
    if (*product_family != *expected) {
      return "zebin is for product family " + std::to_string(*product_family) + ", this device is " +
             std::to_string(*expected);
    }
  }
  if (kernels.empty()) {
    return "zebin has no kernels";
  }
  return std::nullopt;
}

// SPIR-V: magic, then OpEntryPoint (opcode 15) instructions name the kernels.
std::optional<std::string>
inspect_spirv(const std::string& b, std::vector<std::string>& kernels)
{
  if (b.size() < 20 || b.size() % 4 != 0 || read_u32(b, 0) != 0x07230203u) {
    return "not SPIR-V (bad magic or size)";
  }
  for (size_t at = 20; at + 4 <= b.size();) {
    const uint32_t word = read_u32(b, at);
    const uint32_t count = word >> 16, opcode = word & 0xffff;
    if (count == 0 || at + count * 4 > b.size()) {
      return "SPIR-V instruction out of bounds";
    }
    if (opcode == 15 && count > 3) {
      kernels.emplace_back(b.c_str() + at + 12, ::strnlen(b.c_str() + at + 12, (count - 3) * 4));
    }
    at += count * 4;
  }
  if (kernels.empty()) {
    return "SPIR-V has no entry points";
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- ze API
ze_result_t ZE_APICALL Init(ze_init_flags_t) { log_line("init"); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
DriverGet(uint32_t* count, ze_driver_handle_t* drivers)
{
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (drivers != nullptr && *count >= 1) drivers[0] = reinterpret_cast<ze_driver_handle_t>(&g_driver);
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DriverGetApiVersion(ze_driver_handle_t, ze_api_version_t* v) { *v = ZE_API_VERSION_1_3; return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
DriverGetProperties(ze_driver_handle_t, ze_driver_properties_t* p)
{
  std::memset(&p->uuid, 0, sizeof p->uuid);
  std::memcpy(p->uuid.id, "prewarm-testdbl", 15);
  p->driverVersion = encoded_driver_version();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DriverGetIpcProperties(ze_driver_handle_t, ze_driver_ipc_properties_t* p) { p->flags = 0; return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL DriverGetExtensionProperties(ze_driver_handle_t, uint32_t* count, ze_driver_extension_properties_t*) { *count = 0; return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
DeviceGet(ze_driver_handle_t, uint32_t* count, ze_device_handle_t* devices)
{
  const uint32_t have = static_cast<uint32_t>(std::strtoul(env_or("PREWARM_ZE_TEST_DEVICE_COUNT", "1").c_str(), nullptr, 10)) > 0 ? 1 : 0;
  if (devices != nullptr && *count >= 1 && have == 1) devices[0] = reinterpret_cast<ze_device_handle_t>(&g_device);
  *count = have;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
DeviceGetProperties(ze_device_handle_t, ze_device_properties_t* p)
{
  p->type = ZE_DEVICE_TYPE_GPU;
  p->vendorId = 0x8086;
  p->deviceId = device_id();
  p->flags = 0;
  p->subdeviceId = 0;
  p->coreClockRate = 1;
  p->maxMemAllocSize = uint64_t{1} << 30;
  p->maxHardwareContexts = 1;
  p->maxCommandQueuePriority = 0;
  p->numThreadsPerEU = 1;
  p->physicalEUSimdWidth = 8;
  p->numEUsPerSubslice = 1;
  p->numSubslicesPerSlice = 1;
  p->numSlices = 1;
  p->timerResolution = 1;
  p->timestampValidBits = 32;
  p->kernelTimestampValidBits = 32;
  std::memset(&p->uuid, 0, sizeof p->uuid);
  std::memcpy(p->uuid.id, "prewarm-testdbl", 15);
  std::snprintf(p->name, sizeof p->name, "%s", "prewarm test double (not a GPU)");
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
DeviceGetComputeProperties(ze_device_handle_t, ze_device_compute_properties_t* p)
{
  p->maxTotalGroupSize = 1024;
  p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
  p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 1u << 30;
  p->maxSharedLocalMemory = 64 * 1024;
  p->numSubGroupSizes = 1;
  p->subGroupSizes[0] = 16;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
DeviceGetModuleProperties(ze_device_handle_t, ze_device_module_properties_t* p)
{
  p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
  p->flags = ZE_DEVICE_MODULE_FLAG_FP16;
  p->fp16flags = p->fp32flags = p->fp64flags = 0;
  p->maxArgumentsSize = 2048;
  p->printfBufferSize = 0;
  std::memset(&p->nativeKernelSupported, 0, sizeof p->nativeKernelSupported);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
DeviceGetCommandQueueGroupProperties(ze_device_handle_t, uint32_t* count, ze_command_queue_group_properties_t* p)
{
  if (p != nullptr && *count >= 1) {
    p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    p[0].maxMemoryFillPatternSize = 4;
    p[0].numQueues = 1;
  }
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetSubDevices(ze_device_handle_t, uint32_t* count, ze_device_handle_t*) { *count = 0; return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL DeviceGetMemoryProperties(ze_device_handle_t, uint32_t* count, ze_device_memory_properties_t*) { *count = 0; return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
ContextCreate(ze_driver_handle_t, const ze_context_desc_t*, ze_context_handle_t* out)
{
  *out = reinterpret_cast<ze_context_handle_t>(new ContextObject);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL ContextDestroy(ze_context_handle_t h) { delete as<ze_context_handle_t, ContextObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
ModuleCreate(ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t* desc, ze_module_handle_t* out,
             ze_module_build_log_handle_t* build_log)
{
  if (desc == nullptr || out == nullptr || (desc->inputSize > 0 && desc->pInputModule == nullptr)) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  auto module = std::make_unique<ModuleObject>();
  module->format = desc->format;
  module->bytes.assign(reinterpret_cast<const char*>(desc->pInputModule), desc->inputSize);
  const bool native = desc->format == ZE_MODULE_FORMAT_NATIVE;
  auto rejection = native ? inspect_zebin(module->bytes, module->kernels) : inspect_spirv(module->bytes, module->kernels);
  std::string line = std::string("module-create format=") + (native ? "native" : "spirv") +
                     " size=" + std::to_string(desc->inputSize) + " sha256=" +
                     sha256_hex(desc->pInputModule, desc->inputSize) +
                     " flags=" + quoted(desc->pBuildFlags != nullptr ? desc->pBuildFlags : "");
  if (build_log != nullptr) {
    *build_log = reinterpret_cast<ze_module_build_log_handle_t>(new BuildLogObject{rejection.value_or("")});
  }
  if (rejection) {
    log_line(line + " result=rejected reason=" + quoted(*rejection));
    *out = nullptr;
    return native ? ZE_RESULT_ERROR_INVALID_NATIVE_BINARY : ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  }
  std::string names;
  for (const auto& k : module->kernels) {
    names += (names.empty() ? "" : ",") + k;
  }
  log_line(line + " result=accepted kernels=" + names);
  *out = reinterpret_cast<ze_module_handle_t>(module.release());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL ModuleDestroy(ze_module_handle_t h) { delete as<ze_module_handle_t, ModuleObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
ModuleGetNativeBinary(ze_module_handle_t h, size_t* size, uint8_t* data)
{
  auto* module = as<ze_module_handle_t, ModuleObject>(h);
  if (module->format != ZE_MODULE_FORMAT_NATIVE) {
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; // the double compiles nothing
  }
  if (data != nullptr) {
    std::memcpy(data, module->bytes.data(), std::min(*size, module->bytes.size()));
  }
  *size = module->bytes.size();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
ModuleGetKernelNames(ze_module_handle_t h, uint32_t* count, const char** names)
{
  auto* module = as<ze_module_handle_t, ModuleObject>(h);
  if (names != nullptr) {
    for (uint32_t i = 0; i < *count && i < module->kernels.size(); ++i) names[i] = module->kernels[i].c_str();
  }
  *count = static_cast<uint32_t>(module->kernels.size());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
ModuleBuildLogGetString(ze_module_build_log_handle_t h, size_t* size, char* text)
{
  auto* log = as<ze_module_build_log_handle_t, BuildLogObject>(h);
  if (text != nullptr && *size > 0) {
    const size_t n = std::min(*size - 1, log->text.size());
    std::memcpy(text, log->text.data(), n);
    text[n] = '\0';
  }
  *size = log->text.size() + 1;
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL ModuleBuildLogDestroy(ze_module_build_log_handle_t h) { delete as<ze_module_build_log_handle_t, BuildLogObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
KernelCreate(ze_module_handle_t h, const ze_kernel_desc_t* desc, ze_kernel_handle_t* out)
{
  auto* module = as<ze_module_handle_t, ModuleObject>(h);
  if (desc == nullptr || desc->pKernelName == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  bool found = false;
  for (const auto& k : module->kernels) found = found || k == desc->pKernelName;
  if (!found) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
  log_line(std::string("kernel-create name=") + desc->pKernelName);
  *out = reinterpret_cast<ze_kernel_handle_t>(new KernelObject{module, desc->pKernelName, {}, {1, 1, 1}});
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL KernelDestroy(ze_kernel_handle_t h) { delete as<ze_kernel_handle_t, KernelObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
KernelSetArgumentValue(ze_kernel_handle_t h, uint32_t index, size_t size, const void* value)
{
  auto* kernel = as<ze_kernel_handle_t, KernelObject>(h);
  kernel->args[index] = value != nullptr ? std::string(static_cast<const char*>(value), size) : std::string(size, '\0');
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
KernelSetGroupSize(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z)
{
  if (x == 0 || y == 0 || z == 0 || uint64_t{x} * y * z > 1024) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  auto* kernel = as<ze_kernel_handle_t, KernelObject>(h);
  kernel->group_size[0] = x; kernel->group_size[1] = y; kernel->group_size[2] = z;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
KernelSuggestGroupSize(ze_kernel_handle_t, uint32_t x, uint32_t y, uint32_t z, uint32_t* gx, uint32_t* gy, uint32_t* gz)
{
  auto pick = [](uint32_t n) { uint32_t g = 1; while (g < 16 && n % (g * 2) == 0) g *= 2; return g; };
  *gx = pick(x); *gy = pick(y); *gz = pick(z);
  return ZE_RESULT_SUCCESS;
}

std::mutex g_memory_mutex;
std::map<void*, size_t> g_allocations;

ze_result_t
allocate(size_t size, size_t alignment, void** out)
{
  alignment = std::max<size_t>(alignment, 64);
  void* p = std::aligned_alloc(alignment, (std::max<size_t>(size, 1) + alignment - 1) / alignment * alignment);
  if (p == nullptr) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  std::scoped_lock lock(g_memory_mutex);
  g_allocations[p] = size;
  *out = p;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL MemAllocShared(ze_context_handle_t, const ze_device_mem_alloc_desc_t*, const ze_host_mem_alloc_desc_t*, size_t size, size_t alignment, ze_device_handle_t, void** out) { return allocate(size, alignment, out); }
ze_result_t ZE_APICALL MemAllocDevice(ze_context_handle_t, const ze_device_mem_alloc_desc_t*, size_t size, size_t alignment, ze_device_handle_t, void** out) { return allocate(size, alignment, out); }
ze_result_t ZE_APICALL MemAllocHost(ze_context_handle_t, const ze_host_mem_alloc_desc_t*, size_t size, size_t alignment, void** out) { return allocate(size, alignment, out); }

ze_result_t ZE_APICALL
MemFree(ze_context_handle_t, void* p)
{
  std::scoped_lock lock(g_memory_mutex);
  if (g_allocations.erase(p) == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  std::free(p);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL CommandQueueCreate(ze_context_handle_t, ze_device_handle_t, const ze_command_queue_desc_t*, ze_command_queue_handle_t* out) { *out = reinterpret_cast<ze_command_queue_handle_t>(new QueueObject); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandQueueDestroy(ze_command_queue_handle_t h) { delete as<ze_command_queue_handle_t, QueueObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
CommandQueueExecuteCommandLists(ze_command_queue_handle_t, uint32_t count, ze_command_list_handle_t* lists, ze_fence_handle_t fence)
{
  for (uint32_t i = 0; i < count; ++i) {
    for (auto& command : as<ze_command_list_handle_t, CommandListObject>(lists[i])->commands) command();
  }
  if (fence != nullptr) as<ze_fence_handle_t, FenceObject>(fence)->signaled = true;
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL CommandQueueSynchronize(ze_command_queue_handle_t, uint64_t) { return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL CommandListCreate(ze_context_handle_t, ze_device_handle_t, const ze_command_list_desc_t*, ze_command_list_handle_t* out) { *out = reinterpret_cast<ze_command_list_handle_t>(new CommandListObject{false, {}}); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandListCreateImmediate(ze_context_handle_t, ze_device_handle_t, const ze_command_queue_desc_t*, ze_command_list_handle_t* out) { *out = reinterpret_cast<ze_command_list_handle_t>(new CommandListObject{true, {}}); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandListDestroy(ze_command_list_handle_t h) { delete as<ze_command_list_handle_t, CommandListObject>(h); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandListClose(ze_command_list_handle_t) { return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandListReset(ze_command_list_handle_t h) { as<ze_command_list_handle_t, CommandListObject>(h)->commands.clear(); return ZE_RESULT_SUCCESS; }

void
submit(CommandListObject* list, std::function<void()> command)
{
  if (list->immediate) {
    command();
  } else {
    list->commands.push_back(std::move(command));
  }
}

ze_result_t ZE_APICALL
CommandListAppendLaunchKernel(ze_command_list_handle_t h, ze_kernel_handle_t k, const ze_group_count_t* groups, ze_event_handle_t, uint32_t, ze_event_handle_t*)
{
  auto* list = as<ze_command_list_handle_t, CommandListObject>(h);
  auto* kernel = as<ze_kernel_handle_t, KernelObject>(k);
  if (groups == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // The launch is recorded, never executed: this is not a GPU.
  std::string line = "launch kernel=" + kernel->name + " groups=" + std::to_string(groups->groupCountX) + "," +
                     std::to_string(groups->groupCountY) + "," + std::to_string(groups->groupCountZ) +
                     " group-size=" + std::to_string(kernel->group_size[0]) + "," +
                     std::to_string(kernel->group_size[1]) + "," + std::to_string(kernel->group_size[2]) +
                     " args=" + std::to_string(kernel->args.size()) + " list=" + (list->immediate ? "immediate" : "regular");
  submit(list, [line] { log_line(line); });
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
CommandListAppendMemoryCopy(ze_command_list_handle_t h, void* dst, const void* src, size_t size, ze_event_handle_t, uint32_t, ze_event_handle_t*)
{
  submit(as<ze_command_list_handle_t, CommandListObject>(h), [dst, src, size] {
    std::memmove(dst, src, size);
    log_line("copy bytes=" + std::to_string(size));
  });
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL CommandListAppendBarrier(ze_command_list_handle_t, ze_event_handle_t, uint32_t, ze_event_handle_t*) { return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL FenceCreate(ze_command_queue_handle_t, const ze_fence_desc_t*, ze_fence_handle_t* out) { *out = reinterpret_cast<ze_fence_handle_t>(new FenceObject); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL FenceDestroy(ze_fence_handle_t h) { delete as<ze_fence_handle_t, FenceObject>(h); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL FenceHostSynchronize(ze_fence_handle_t h, uint64_t) { return as<ze_fence_handle_t, FenceObject>(h)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY; }
ze_result_t ZE_APICALL FenceQueryStatus(ze_fence_handle_t h) { return as<ze_fence_handle_t, FenceObject>(h)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY; }
ze_result_t ZE_APICALL FenceReset(ze_fence_handle_t h) { as<ze_fence_handle_t, FenceObject>(h)->signaled = false; return ZE_RESULT_SUCCESS; }

bool
version_ok(ze_api_version_t version)
{
  return ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT) == ZE_MAJOR_VERSION(version);
}

} // namespace

// ---------------------------------------------------------------- exported DDI getters
#define PW_TABLE_BEGIN(getter, table_type)                                     \
  extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, table_type* table) \
  {                                                                            \
    if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;         \
    if (!version_ok(version)) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;      \
    *table = {};
#define PW_TABLE_END                                                           \
    return ZE_RESULT_SUCCESS;                                                  \
  }
#define PW_EMPTY_TABLE(getter, table_type) PW_TABLE_BEGIN(getter, table_type) PW_TABLE_END

PW_TABLE_BEGIN(zeGetGlobalProcAddrTable, ze_global_dditable_t)
  table->pfnInit = Init;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetDriverProcAddrTable, ze_driver_dditable_t)
  table->pfnGet = DriverGet;
  table->pfnGetApiVersion = DriverGetApiVersion;
  table->pfnGetProperties = DriverGetProperties;
  table->pfnGetIpcProperties = DriverGetIpcProperties;
  table->pfnGetExtensionProperties = DriverGetExtensionProperties;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetDeviceProcAddrTable, ze_device_dditable_t)
  table->pfnGet = DeviceGet;
  table->pfnGetProperties = DeviceGetProperties;
  table->pfnGetComputeProperties = DeviceGetComputeProperties;
  table->pfnGetModuleProperties = DeviceGetModuleProperties;
  table->pfnGetCommandQueueGroupProperties = DeviceGetCommandQueueGroupProperties;
  table->pfnGetSubDevices = DeviceGetSubDevices;
  table->pfnGetMemoryProperties = DeviceGetMemoryProperties;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetContextProcAddrTable, ze_context_dditable_t)
  table->pfnCreate = ContextCreate;
  table->pfnDestroy = ContextDestroy;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetModuleProcAddrTable, ze_module_dditable_t)
  table->pfnCreate = ModuleCreate;
  table->pfnDestroy = ModuleDestroy;
  table->pfnGetNativeBinary = ModuleGetNativeBinary;
  table->pfnGetKernelNames = ModuleGetKernelNames;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
  table->pfnGetString = ModuleBuildLogGetString;
  table->pfnDestroy = ModuleBuildLogDestroy;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetKernelProcAddrTable, ze_kernel_dditable_t)
  table->pfnCreate = KernelCreate;
  table->pfnDestroy = KernelDestroy;
  table->pfnSetArgumentValue = KernelSetArgumentValue;
  table->pfnSetGroupSize = KernelSetGroupSize;
  table->pfnSuggestGroupSize = KernelSuggestGroupSize;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetMemProcAddrTable, ze_mem_dditable_t)
  table->pfnAllocShared = MemAllocShared;
  table->pfnAllocDevice = MemAllocDevice;
  table->pfnAllocHost = MemAllocHost;
  table->pfnFree = MemFree;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
  table->pfnCreate = CommandQueueCreate;
  table->pfnDestroy = CommandQueueDestroy;
  table->pfnExecuteCommandLists = CommandQueueExecuteCommandLists;
  table->pfnSynchronize = CommandQueueSynchronize;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetCommandListProcAddrTable, ze_command_list_dditable_t)
  table->pfnCreate = CommandListCreate;
  table->pfnCreateImmediate = CommandListCreateImmediate;
  table->pfnDestroy = CommandListDestroy;
  table->pfnClose = CommandListClose;
  table->pfnReset = CommandListReset;
  table->pfnAppendLaunchKernel = CommandListAppendLaunchKernel;
  table->pfnAppendMemoryCopy = CommandListAppendMemoryCopy;
  table->pfnAppendBarrier = CommandListAppendBarrier;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetFenceProcAddrTable, ze_fence_dditable_t)
  table->pfnCreate = FenceCreate;
  table->pfnDestroy = FenceDestroy;
  table->pfnHostSynchronize = FenceHostSynchronize;
  table->pfnQueryStatus = FenceQueryStatus;
  table->pfnReset = FenceReset;
PW_TABLE_END

PW_EMPTY_TABLE(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
PW_EMPTY_TABLE(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
PW_EMPTY_TABLE(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t)
PW_EMPTY_TABLE(zeGetEventProcAddrTable, ze_event_dditable_t)
PW_EMPTY_TABLE(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
PW_EMPTY_TABLE(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
PW_EMPTY_TABLE(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
PW_EMPTY_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
PW_EMPTY_TABLE(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
PW_EMPTY_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
PW_EMPTY_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
PW_EMPTY_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)

PW_EMPTY_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
PW_EMPTY_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t)
PW_EMPTY_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t)
PW_EMPTY_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t)
PW_EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
PW_EMPTY_TABLE(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
PW_EMPTY_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
PW_EMPTY_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t)
PW_EMPTY_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
PW_EMPTY_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
PW_EMPTY_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
PW_EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
PW_EMPTY_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)

PW_EMPTY_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
PW_EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
PW_EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
PW_EMPTY_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
PW_EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
PW_EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
PW_EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
PW_EMPTY_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
PW_EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
PW_EMPTY_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
PW_EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
PW_EMPTY_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
PW_EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
PW_EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
PW_EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
PW_EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
PW_EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
