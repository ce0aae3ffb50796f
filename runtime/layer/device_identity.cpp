// SPDX-License-Identifier: Apache-2.0
#include "layer/device_identity.hpp"

#include "base/device_properties.hpp"

#include "layer/cl_query.hpp"
#include "layer/next_dispatch.hpp"

#include <fmt/format.h>

#include <dlfcn.h>
#include <map>
#include <mutex>
#include <sys/stat.h>

namespace prewarm::layer {
namespace {

// Layer key fields, after ProgramKey's own: the identity of this format
// (bumped when the layer's key changes meaning) and of the ICD library.
constexpr std::string_view k_layer_format = "1";

std::string
device_string(cl_device_id device, cl_device_info what)
{
  return query_string([&](std::size_t n, void* v, std::size_t* r) { return next().clGetDeviceInfo(device, what, n, v, r); });
}

std::string
platform_string(cl_platform_id platform, cl_platform_info what)
{
  return query_string([&](std::size_t n, void* v, std::size_t* r) { return next().clGetPlatformInfo(platform, what, n, v, r); });
}

template<typename T>
T
device_value(cl_device_id device, cl_device_info what)
{
  T value{};
  if (next().clGetDeviceInfo(device, what, sizeof value, &value, nullptr) != CL_SUCCESS) {
    return T{};
  }
  return value;
}

// As runtime/opencl/device.cpp names it (which calls the loader's exports
// and so cannot run inside the layer).
std::string
vendor_of(cl_device_id device)
{
  return opencl_vendor_name((device_value<cl_device_type>(device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0,
                            device_value<cl_uint>(device, CL_DEVICE_VENDOR_ID));
}

// An ICD object starts with a pointer to its driver's dispatch table (the
// cl_khr_icd contract); the library that holds those functions is the ICD.
std::string
icd_identity(cl_device_id device)
{
  const cl_icd_dispatch* dispatch = *reinterpret_cast<const cl_icd_dispatch* const*>(device);
  void* function = dispatch == nullptr ? nullptr : reinterpret_cast<void*>(dispatch->clGetDeviceInfo);
  Dl_info info{};
  if (function == nullptr || ::dladdr(function, &info) == 0 || info.dli_fname == nullptr) {
    return "unknown";
  }
  struct stat st{};
  if (::stat(info.dli_fname, &st) != 0) {
    return fmt::format("{} unreadable", info.dli_fname);
  }
  return fmt::format("{} size={} mtime={}", info.dli_fname, st.st_size, st.st_mtim.tv_sec);
}

DeviceIdentity
query_identity(cl_device_id device)
{
  DeviceIdentity id;
  const auto platform = device_value<cl_platform_id>(device, CL_DEVICE_PLATFORM);
  if (platform != nullptr) {
    id.platform = platform_string(platform, CL_PLATFORM_NAME);
    id.platform_version = platform_string(platform, CL_PLATFORM_VERSION);
  }
  id.device = device_string(device, CL_DEVICE_NAME);
  id.device_version = device_string(device, CL_DEVICE_VERSION);
  id.driver = device_string(device, CL_DRIVER_VERSION);
  id.vendor = vendor_of(device);
  id.icd = icd_identity(device);
  return id;
}

} // namespace

const DeviceIdentity&
identity_of(cl_device_id device)
{
  // Leaked on purpose (see layer_settings.cpp); entries are never erased, so
  // a returned reference stays valid.
  static auto* const mutex = new std::mutex;
  static auto* const identities = new std::map<cl_device_id, DeviceIdentity>;
  {
    std::lock_guard lock(*mutex);
    if (const auto it = identities->find(device); it != identities->end()) {
      return it->second;
    }
  }
  auto id = query_identity(device); // outside the lock: driver calls
  std::lock_guard lock(*mutex);
  return identities->try_emplace(device, std::move(id)).first->second;
}

store::ProgramKey
layer_key(cl_device_id device,
          std::string_view stage,
          store::SourceKind kind,
          std::string_view payload_sha256,
          std::string_view options,
          std::vector<std::pair<std::string, std::string>> extra)
{
  const auto& id = identity_of(device);
  store::ProgramKey key;
  key.source_sha256 = std::string(payload_sha256);
  key.source_kind = kind;
  key.options = std::string(options);
  static_cast<store::DeviceFields&>(key) = id;
  key.extra.emplace_back("layer-format", std::string(k_layer_format));
  key.extra.emplace_back("stage", std::string(stage));
  key.extra.emplace_back("icd", id.icd);
  for (auto& field : extra) {
    key.extra.push_back(std::move(field));
  }
  return key;
}

} // namespace prewarm::layer
