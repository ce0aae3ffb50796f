// SPDX-License-Identifier: Apache-2.0
#include "engine/session.hpp"

#include "base/encoding.hpp"
#include "engine/kernel_sources.hpp"
#include "engine/level_zero_backend.hpp"
#include "engine/opencl_backend.hpp"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace prewarm::engine {
namespace {

using Clock = std::chrono::steady_clock;

double
seconds_since(Clock::time_point start)
{
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct KernelInfo
{
  Kernel kernel = nullptr;
  std::string source_name;
  std::string kernel_name;
  std::string options;
};

} // namespace

struct Session::Impl
{
  // Stats first: the backend holds a reference to them.
  SessionStats stats;
  Backend backend_kind = Backend::opencl;
  std::unique_ptr<DeviceBackend> backend;
  // Kernels by (source, options, kernel name); the backend owns them.
  std::map<std::tuple<std::string, std::string, std::string>, KernelInfo, std::less<>> kernels;
  std::map<Kernel, const KernelInfo*> kernel_info;
  std::set<std::string, std::less<>> variants_seen;
  std::shared_ptr<MemoryAccounting> memory = std::make_shared<MemoryAccounting>();
};

Session::Session(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Result<Session>
Session::open(const SessionOptions& options)
{
  auto impl = std::make_unique<Impl>();
  impl->backend_kind = options.backend;
  impl->stats.backend = std::string(to_string(options.backend));
  if (options.backend == Backend::level_zero) {
    PW_ASSIGN(impl->backend, open_level_zero_backend(options, impl->stats));
  } else {
    PW_ASSIGN(impl->backend, open_opencl_backend(options, impl->stats));
  }
  return Session(std::move(impl));
}

const SessionDevice&
Session::device() const
{
  return m_impl->backend->device();
}

Backend
Session::backend() const
{
  return m_impl->backend_kind;
}

bool
Session::has_fp16() const
{
  return m_impl->backend->has_fp16();
}

Result<Kernel>
Session::kernel(std::string_view source_name, std::string_view kernel_name, const Defines& defines)
{
  auto& impl = *m_impl;
  const auto options = defines.options();
  const auto key = std::make_tuple(std::string(source_name), options, std::string(kernel_name));
  if (const auto it = impl.kernels.find(key); it != impl.kernels.end()) {
    return it->second.kernel;
  }
  const auto context_text = fmt::format("kernel {}:{} [{}]", source_name, kernel_name, options);
  const auto source = find_embedded(kernels::embedded_files(), source_name);
  if (!source) {
    return fail(Errc::internal, fmt::format("no kernel source {} is embedded (kernels/*.cl)", in_quotes(source_name)));
  }
  const auto start = Clock::now();
  auto kernel = impl.backend->create_kernel(ProgramText{source_name, *source, options}, kernel_name);
  impl.stats.compile_seconds += seconds_since(start);
  PW_TRY_CTX(context_text, kernel);
  auto [it, inserted] = impl.kernels.emplace(
    key, KernelInfo{*kernel, std::string(source_name), std::string(kernel_name), options});
  impl.kernel_info[*kernel] = &it->second;
  return *kernel;
}

Result<DeviceBuffer>
Session::allocate(std::size_t bytes)
{
  PW_ASSIGN(auto buffer, m_impl->backend->allocate(bytes, m_impl->memory));
  m_impl->stats.peak_device_bytes = m_impl->memory->peak_bytes;
  return buffer;
}

Status
Session::write_bytes(const DeviceBuffer& buffer, std::span<const std::byte> bytes)
{
  if (bytes.size() > buffer.bytes()) {
    return fail(Errc::internal, fmt::format("write of {} bytes into a {}-byte buffer", bytes.size(), buffer.bytes()));
  }
  if (bytes.empty()) {
    return {};
  }
  const auto start = Clock::now();
  auto status = m_impl->backend->write(buffer, bytes);
  m_impl->stats.execute_seconds += seconds_since(start);
  return status;
}

Status
Session::read_bytes(const DeviceBuffer& buffer, std::span<std::byte> bytes)
{
  if (bytes.size() > buffer.bytes()) {
    return fail(Errc::internal, fmt::format("read of {} bytes from a {}-byte buffer", bytes.size(), buffer.bytes()));
  }
  if (bytes.empty()) {
    return {};
  }
  const auto start = Clock::now();
  auto status = m_impl->backend->read(buffer, bytes);
  m_impl->stats.execute_seconds += seconds_since(start);
  return status;
}

Status
Session::launch(Kernel kernel, const LaunchGeometry& geometry, const KernelArgs& args)
{
  auto& impl = *m_impl;
  const auto info = impl.kernel_info.find(kernel);
  if (info == impl.kernel_info.end()) {
    return fail(Errc::internal, "launch of a kernel this session did not create");
  }
  const auto name = fmt::format("{}:{} [{}] local={}", info->second->source_name, info->second->kernel_name,
                                info->second->options, geometry.local_text());
  for (unsigned d = 0; d < geometry.dimensions; ++d) {
    if (!geometry.driver_chooses_local() && geometry.global[d] % geometry.local[d] != 0) {
      return fail(Errc::internal,
                  fmt::format("{}: global size {} is not a multiple of local size {} in dimension {}", name,
                              geometry.global[d], geometry.local[d], d));
    }
  }
  const auto start = Clock::now();
  auto status = impl.backend->launch(kernel, geometry, args, name);
  impl.stats.execute_seconds += seconds_since(start);
  PW_TRY(status);
  ++impl.stats.launches;
  if (impl.variants_seen.insert(name).second) {
    impl.stats.variants.push_back(name);
  }
  return {};
}

Status
Session::finish()
{
  const auto start = Clock::now();
  auto status = m_impl->backend->finish();
  m_impl->stats.execute_seconds += seconds_since(start);
  return status;
}

Status
Session::capture_programs()
{
  return m_impl->backend->capture_programs();
}

const SessionStats&
Session::stats() const
{
  return m_impl->stats;
}

} // namespace prewarm::engine
