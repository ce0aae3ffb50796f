// SPDX-License-Identifier: Apache-2.0
// A TEST DOUBLE, NOT A GPU: an OpenCL ICD that poses as an Intel GPU (vendor
// 0x8086, cl_intel_device_attribute_query's CL_DEVICE_ID_INTEL, NEO's
// CL_DRIVER_VERSION) so that the runtime's host probe and the OpenCL layer's
// AOT selection can be tested through the REAL loader (ocl-icd) on a machine
// without an Intel GPU. Underneath is PoCL: the double loads libpocl, and
// rewrites a few entries of PoCL's own ICD dispatch table, so every object
// stays PoCL's and every other call is PoCL's.
//
// Rewritten:
//   platform/device queries: name, vendor, type GPU, vendor id, driver
//     version, the extension list + cl_intel_device_attribute_query, and
//     CL_DEVICE_ID_INTEL; clGetDeviceIDs/clCreateContextFromType take GPU
//     for PoCL's devices.
//   clCreateProgramWithSource: remembers each source by its SHA-256.
//   clCreateProgramWithBinary: a zebin (ELF, e_machine 205) is accepted only
//     if it is byte for byte one of the zebins under PREWARM_CL_DOUBLE_AOT
//     (a programs directory: aot/<ocloc-device>/<key>.zebin) whose target
//     record lists this device's PCI id, as a driver refuses a binary for
//     another device (CL_INVALID_BINARY otherwise). Its meta names the
//     source's SHA-256: the double builds the source this process created
//     with that hash on PoCL. It NEVER runs the zebin; what it proves is
//     which binary the layer chose and that the application then works.
//     Other binaries go to PoCL unchanged.
// Settings (environment): PREWARM_CL_DOUBLE_DEVICE_ID (0x56a0),
// PREWARM_CL_DOUBLE_DRIVER_VERSION (22.43.24595), PREWARM_CL_DOUBLE_AOT,
// PREWARM_CL_DOUBLE_LOG (a file: one line per accepted or refused zebin),
// PREWARM_CL_DOUBLE_POCL (libpocl.so.2).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

#include <openssl/sha.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr cl_device_info k_device_id_intel = 0x4251;
constexpr const char* k_device_name = "prewarm test double posing as an Intel GPU (PoCL underneath, not a GPU)";
constexpr const char* k_platform_name = "Intel(R) OpenCL Graphics (prewarm test double, PoCL underneath)";
constexpr const char* k_vendor = "Intel(R) Corporation";

cl_icd_dispatch g_pocl{}; // PoCL's entries as they were
std::mutex g_mutex;
std::map<std::string, std::string> g_sources; // sha256 -> source

std::string
env(const char* name, const char* fallback)
{
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

void
log_line(const std::string& line)
{
  const auto path = env("PREWARM_CL_DOUBLE_LOG", "");
  if (path.empty()) {
    return;
  }
  std::lock_guard lock(g_mutex);
  std::ofstream(path, std::ios::app) << line << "\n";
}

std::string
sha256_hex(const std::string& data)
{
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  std::string out;
  char hex[3];
  for (unsigned char byte : digest) {
    std::snprintf(hex, sizeof hex, "%02x", byte);
    out += hex;
  }
  return out;
}

std::string
read_whole(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return in ? out.str() : std::string();
}

std::vector<std::string>
list_dir(const std::string& path)
{
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(path.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] != '.') {
        names.emplace_back(entry->d_name);
      }
    }
    ::closedir(dir);
  }
  return names;
}

// "name value" line of a meta or target record.
std::string
field(const std::string& text, const std::string& name)
{
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + " ", 0) == 0) {
      return line.substr(name.size() + 1);
    }
  }
  return {};
}

cl_int
answer(const void* data, size_t size, size_t value_size, void* value, size_t* size_ret)
{
  if (size_ret != nullptr) {
    *size_ret = size;
  }
  if (value != nullptr) {
    if (value_size < size) {
      return CL_INVALID_VALUE;
    }
    std::memcpy(value, data, size);
  }
  return CL_SUCCESS;
}

cl_int
answer_string(const std::string& text, size_t value_size, void* value, size_t* size_ret)
{
  return answer(text.c_str(), text.size() + 1, value_size, value, size_ret);
}

cl_uint
device_id()
{
  return static_cast<cl_uint>(std::strtoul(env("PREWARM_CL_DOUBLE_DEVICE_ID", "0x56a0").c_str(), nullptr, 0));
}

std::string
device_id_text()
{
  char text[16];
  std::snprintf(text, sizeof text, "0x%04x", device_id());
  return text;
}

cl_int CL_API_CALL
get_platform_info(cl_platform_id platform, cl_platform_info name, size_t size, void* value, size_t* size_ret)
{
  switch (name) {
  case CL_PLATFORM_NAME:
    return answer_string(k_platform_name, size, value, size_ret);
  case CL_PLATFORM_VENDOR:
    return answer_string(k_vendor, size, value, size_ret);
  default:
    return g_pocl.clGetPlatformInfo(platform, name, size, value, size_ret);
  }
}

cl_device_type
as_pocl_type(cl_device_type type)
{
  return (type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_ALL)) != 0 ? CL_DEVICE_TYPE_ALL : 0;
}

cl_int CL_API_CALL
get_device_ids(cl_platform_id platform, cl_device_type type, cl_uint n, cl_device_id* devices, cl_uint* count)
{
  if (as_pocl_type(type) == 0) {
    if (count != nullptr) {
      *count = 0;
    }
    return CL_DEVICE_NOT_FOUND;
  }
  return g_pocl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices, count);
}

cl_context CL_API_CALL
create_context_from_type(const cl_context_properties* properties, cl_device_type type,
                         void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*), void* user_data,
                         cl_int* errcode_ret)
{
  return g_pocl.clCreateContextFromType(properties, as_pocl_type(type), notify, user_data, errcode_ret);
}

cl_int CL_API_CALL
get_device_info(cl_device_id device, cl_device_info name, size_t size, void* value, size_t* size_ret)
{
  switch (name) {
  case CL_DEVICE_NAME:
    return answer_string(k_device_name, size, value, size_ret);
  case CL_DEVICE_VENDOR:
    return answer_string(k_vendor, size, value, size_ret);
  case CL_DRIVER_VERSION:
    return answer_string(env("PREWARM_CL_DOUBLE_DRIVER_VERSION", "22.43.24595"), size, value, size_ret);
  case CL_DEVICE_TYPE: {
    const cl_device_type type = CL_DEVICE_TYPE_GPU;
    return answer(&type, sizeof type, size, value, size_ret);
  }
  case CL_DEVICE_VENDOR_ID: {
    const cl_uint vendor = 0x8086;
    return answer(&vendor, sizeof vendor, size, value, size_ret);
  }
  case k_device_id_intel: {
    const cl_uint id = device_id();
    return answer(&id, sizeof id, size, value, size_ret);
  }
  case CL_DEVICE_EXTENSIONS: {
    size_t length = 0;
    if (const cl_int status = g_pocl.clGetDeviceInfo(device, name, 0, nullptr, &length); status != CL_SUCCESS) {
      return status;
    }
    std::string extensions(length, '\0');
    g_pocl.clGetDeviceInfo(device, name, length, extensions.data(), nullptr);
    extensions.resize(std::strlen(extensions.c_str()));
    return answer_string(extensions + " cl_intel_device_attribute_query", size, value, size_ret);
  }
  default:
    return g_pocl.clGetDeviceInfo(device, name, size, value, size_ret);
  }
}

cl_program CL_API_CALL
create_program_with_source(cl_context context, cl_uint count, const char** strings, const size_t* lengths, cl_int* errcode_ret)
{
  if (strings != nullptr) {
    std::string source;
    for (cl_uint i = 0; i < count; ++i) {
      if (strings[i] != nullptr) {
        source += lengths != nullptr && lengths[i] != 0 ? std::string(strings[i], lengths[i]) : std::string(strings[i]);
      }
    }
    const auto sha = sha256_hex(source);
    std::lock_guard lock(g_mutex);
    g_sources.emplace(sha, std::move(source));
  }
  return g_pocl.clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
}

bool
is_zebin(const unsigned char* bytes, size_t size)
{
  // ELF64, e_machine (offset 18) 205: EM_INTELGT.
  return size > 20 && std::memcmp(bytes, "\x7f" "ELF", 4) == 0 && bytes[18] == 205 && bytes[19] == 0;
}

// The source of an installed zebin for this device, or why a driver would refuse it.
std::string
source_of_zebin(const std::string& zebin, std::string& why)
{
  const auto aot = env("PREWARM_CL_DOUBLE_AOT", "") + "/aot";
  for (const auto& device : list_dir(aot)) {
    const auto dir = aot + "/" + device;
    bool for_this_device = false;
    for (const auto& name : list_dir(dir)) {
      if (name.rfind("target.", 0) == 0) {
        const auto ids = "," + field(read_whole(dir + "/" + name), "pci-ids") + ",";
        for_this_device = for_this_device || ids.find("," + device_id_text() + ",") != std::string::npos;
      }
    }
    for (const auto& name : list_dir(dir)) {
      if (name.size() <= 6 || name.substr(name.size() - 6) != ".zebin" || read_whole(dir + "/" + name) != zebin) {
        continue;
      }
      const auto key = name.substr(0, name.size() - 6);
      if (!for_this_device) {
        why = "zebin " + key.substr(0, 12) + " is for " + device + ", not for device " + device_id_text();
        return {};
      }
      const auto sha = field(read_whole(dir + "/" + key + ".meta"), "source-sha256");
      std::lock_guard lock(g_mutex);
      const auto it = g_sources.find(sha);
      if (it == g_sources.end()) {
        why = "zebin " + key.substr(0, 12) + ": this process created no program with its source";
        return {};
      }
      why = "zebin " + key.substr(0, 12) + " for " + device;
      return it->second;
    }
  }
  why = "a zebin that is not one of the installed AOT binaries";
  return {};
}

cl_program CL_API_CALL
create_program_with_binary(cl_context context, cl_uint count, const cl_device_id* devices, const size_t* lengths,
                           const unsigned char** binaries, cl_int* binary_status, cl_int* errcode_ret)
{
  if (count == 0 || binaries == nullptr || lengths == nullptr || !is_zebin(binaries[0], lengths[0])) {
    return g_pocl.clCreateProgramWithBinary(context, count, devices, lengths, binaries, binary_status, errcode_ret);
  }
  std::string source;
  std::string why;
  for (cl_uint i = 0; i < count; ++i) {
    const std::string zebin(reinterpret_cast<const char*>(binaries[i]), lengths[i]);
    auto this_source = is_zebin(binaries[i], lengths[i]) ? source_of_zebin(zebin, why) : std::string();
    if (this_source.empty() || (!source.empty() && this_source != source)) {
      log_line("refused: " + why);
      if (binary_status != nullptr) {
        for (cl_uint j = 0; j < count; ++j) {
          binary_status[j] = j == i ? CL_INVALID_BINARY : CL_SUCCESS;
        }
      }
      if (errcode_ret != nullptr) {
        *errcode_ret = CL_INVALID_BINARY;
      }
      return nullptr;
    }
    source = std::move(this_source);
  }
  log_line("accepted: " + why);
  if (binary_status != nullptr) {
    for (cl_uint j = 0; j < count; ++j) {
      binary_status[j] = CL_SUCCESS;
    }
  }
  const char* text = source.c_str();
  return g_pocl.clCreateProgramWithSource(context, 1, &text, nullptr, errcode_ret);
}

using GetPlatformIDs = cl_int (*)(cl_uint, cl_platform_id*, cl_uint*);
using GetExtension = void* (*)(const char*);

GetPlatformIDs g_pocl_platforms = nullptr;
GetExtension g_pocl_extension = nullptr;

bool
load_pocl()
{
  static const bool loaded = [] {
    void* pocl = ::dlopen(env("PREWARM_CL_DOUBLE_POCL", "libpocl.so.2").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (pocl == nullptr) {
      std::fprintf(stderr, "prewarm cl test double: cannot load PoCL: %s\n", ::dlerror());
      return false;
    }
    g_pocl_extension = reinterpret_cast<GetExtension>(::dlsym(pocl, "POclGetExtensionFunctionAddress"));
    if (g_pocl_extension == nullptr) {
      g_pocl_extension = reinterpret_cast<GetExtension>(::dlsym(pocl, "clGetExtensionFunctionAddress"));
    }
    g_pocl_platforms = reinterpret_cast<GetPlatformIDs>(::dlsym(pocl, "POclIcdGetPlatformIDsKHR"));
    if (g_pocl_platforms == nullptr && g_pocl_extension != nullptr) {
      g_pocl_platforms = reinterpret_cast<GetPlatformIDs>(g_pocl_extension("clIcdGetPlatformIDsKHR"));
    }
    if (g_pocl_platforms == nullptr) {
      std::fprintf(stderr, "prewarm cl test double: PoCL has no clIcdGetPlatformIDsKHR\n");
      return false;
    }
    cl_platform_id platform = nullptr;
    cl_uint count = 0;
    if (g_pocl_platforms(1, &platform, &count) != CL_SUCCESS || count == 0) {
      std::fprintf(stderr, "prewarm cl test double: PoCL reports no platform\n");
      return false;
    }
    // Every PoCL object points to this one table (cl_khr_icd): rewrite it.
    auto* table = *reinterpret_cast<cl_icd_dispatch**>(platform);
    const long page = ::sysconf(_SC_PAGESIZE);
    auto first = reinterpret_cast<uintptr_t>(table) & ~static_cast<uintptr_t>(page - 1);
    auto last = reinterpret_cast<uintptr_t>(table) + sizeof(cl_icd_dispatch);
    if (::mprotect(reinterpret_cast<void*>(first), last - first, PROT_READ | PROT_WRITE) != 0) {
      std::perror("prewarm cl test double: mprotect PoCL's dispatch table");
      return false;
    }
    g_pocl = *table;
    table->clGetPlatformInfo = get_platform_info;
    table->clGetDeviceIDs = get_device_ids;
    table->clGetDeviceInfo = get_device_info;
    table->clCreateContextFromType = create_context_from_type;
    table->clCreateProgramWithSource = create_program_with_source;
    table->clCreateProgramWithBinary = create_program_with_binary;
    return true;
  }();
  return loaded;
}

} // namespace

EXPORT cl_int CL_API_CALL
clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id* platforms, cl_uint* count)
{
  if (!load_pocl()) {
    if (count != nullptr) {
      *count = 0;
    }
    return CL_PLATFORM_NOT_FOUND_KHR;
  }
  return g_pocl_platforms(n, platforms, count);
}

EXPORT void* CL_API_CALL
clGetExtensionFunctionAddress(const char* name)
{
  if (name != nullptr && std::strcmp(name, "clIcdGetPlatformIDsKHR") == 0) {
    return reinterpret_cast<void*>(&clIcdGetPlatformIDsKHR);
  }
  return load_pocl() && g_pocl_extension != nullptr ? g_pocl_extension(name) : nullptr;
}
