// SPDX-License-Identifier: Apache-2.0
#include "engine/session.hpp"

#include "base/encoding.hpp"
#include "base/log.hpp"
#include "engine/kernel_sources.hpp"
#include "opencl/check.hpp"
#include "opencl/program.hpp"
#include "store/aot_loader.hpp"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
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
  opencl::UniqueKernel kernel;
  std::string source_name;
  std::string kernel_name;
  std::string options;
};

} // namespace

struct Session::Impl
{
  opencl::DeviceRef device;
  bool has_fp16 = false;
  opencl::UniqueContext context;
  opencl::UniqueQueue queue;
  std::optional<store::ProgramStore> store;
  std::optional<level_zero::AotPrograms> aot; // set only when the store directory has AOT targets
  // Programs by (source name, options); kernels by (source, options, kernel name).
  // Declared after the store: destroyed first, the store's own references last.
  std::map<std::pair<std::string, std::string>, opencl::UniqueProgram, std::less<>> programs;
  std::map<std::tuple<std::string, std::string, std::string>, KernelInfo, std::less<>> kernels;
  std::map<cl_kernel, const KernelInfo*> kernel_info;
  std::set<std::string, std::less<>> variants_seen;
  std::shared_ptr<MemoryAccounting> memory = std::make_shared<MemoryAccounting>();
  SessionStats stats;

  Result<cl_program> program(std::string_view source_name, const std::string& options);
};

Session::Session(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Result<Session>
Session::open(const SessionOptions& options)
{
  auto impl = std::make_unique<Impl>();
  PW_ASSIGN(impl->device, opencl::select_device(options.device_selector));
  impl->has_fp16 = opencl::device_has_extension(impl->device.device, "cl_khr_fp16");

  cl_int status = CL_SUCCESS;
  const cl_context_properties properties[] = {
    CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(impl->device.platform), 0};
  impl->context = opencl::UniqueContext(clCreateContext(properties, 1, &impl->device.device, nullptr, nullptr, &status));
  PW_TRY_CTX(impl->device.description, opencl::check(status, "clCreateContext"));
  impl->queue = opencl::UniqueQueue(clCreateCommandQueue(impl->context.get(), impl->device.device, 0, &status));
  PW_TRY_CTX(impl->device.description, opencl::check(status, "clCreateCommandQueue"));

  if (!options.program_store.empty()) {
    PW_ASSIGN(auto store, store::ProgramStore::open(options.program_store, options.store_mode));
    impl->store.emplace(std::move(store));
    // A malformed AOT record costs the AOT binaries, not the run: every
    // program can still be built through the store.
    if (auto aot = level_zero::AotPrograms::open(options.program_store); !aot) {
      log::warn("AOT programs in {} not used: {}", in_quotes(options.program_store.string()), aot.error().message());
    } else if (!aot->targets().empty()) {
      // Said once here; each program's fallback is then only a verbose line.
      if (const auto selection = aot->select(store::aot_device_properties(impl->device)); !selection.target) {
        log::info("AOT programs in {} not used for this device: {}", in_quotes(options.program_store.string()),
                  selection.reason);
      }
      impl->aot.emplace(std::move(*aot));
    }
  }
  log::verbose("OpenCL device {}{}", impl->device.description, impl->has_fp16 ? " (cl_khr_fp16)" : "");
  return Session(std::move(impl));
}

const opencl::DeviceRef&
Session::device() const
{
  return m_impl->device;
}

bool
Session::has_fp16() const
{
  return m_impl->has_fp16;
}

cl_context
Session::context() const
{
  return m_impl->context.get();
}

cl_command_queue
Session::queue() const
{
  return m_impl->queue.get();
}

Result<cl_program>
Session::Impl::program(std::string_view source_name, const std::string& options)
{
  const auto key = std::make_pair(std::string(source_name), options);
  if (const auto it = programs.find(key); it != programs.end()) {
    return it->second.get();
  }
  const auto source = find_embedded(kernels::embedded_files(), source_name);
  if (!source) {
    return fail(Errc::internal, fmt::format("no kernel source {} is embedded (kernels/*.cl)", in_quotes(source_name)));
  }
  const auto start = Clock::now();
  opencl::UniqueProgram built;
  if (aot) {
    auto load = store::load_aot_program(context.get(), device, *aot, *source, options);
    const auto label = fmt::format("{} [{}]", source_name, options);
    stats.aot_programs.push_back(fmt::format("{}: {}", label, load.summary()));
    if (load.served()) {
      ++stats.aot_served;
      built = std::move(load.program);
      log::verbose("{}: served from the AOT binary ({})", label, load.summary());
    } else {
      ++stats.aot_fallbacks;
      // A device no target serves says so for every program: only worth a
      // verbose line. A selected target that fails is news.
      if (load.target.empty()) {
        log::verbose("{}: AOT binaries not used ({}); building through the program store", label, load.reason);
      } else {
        log::info("{}: AOT binary not used ({}); building through the program store", label, load.reason);
      }
    }
  }
  if (!built && store) {
    PW_ASSIGN(auto result, store->build_program(context.get(), device, *source, options));
    built = std::move(result.program);
    stats.store = store->counters();
  } else if (!built) {
    PW_ASSIGN(built, opencl::build_from_source(context.get(), device.device, *source, options));
  }
  stats.compile_seconds += seconds_since(start);
  const cl_program handle = built.get();
  programs.emplace(key, std::move(built));
  return handle;
}

Result<cl_kernel>
Session::kernel(std::string_view source_name, std::string_view kernel_name, const Defines& defines)
{
  auto& impl = *m_impl;
  const auto options = defines.options();
  const auto context_text = fmt::format("kernel {}:{} [{}]", source_name, kernel_name, options);
  const auto key = std::make_tuple(std::string(source_name), options, std::string(kernel_name));
  if (const auto it = impl.kernels.find(key); it != impl.kernels.end()) {
    return it->second.kernel.get();
  }
  PW_ASSIGN_CTX(const cl_program program, context_text, impl.program(source_name, options));
  const auto start = Clock::now();
  const std::string name(kernel_name);
  cl_int status = CL_SUCCESS;
  opencl::UniqueKernel kernel(clCreateKernel(program, name.c_str(), &status));
  PW_TRY_CTX(context_text, opencl::check(status, "clCreateKernel"));
  impl.stats.compile_seconds += seconds_since(start);
  const cl_kernel handle = kernel.get();
  auto [it, inserted] = impl.kernels.emplace(
    key, KernelInfo{std::move(kernel), std::string(source_name), name, options});
  impl.kernel_info[handle] = &it->second;
  return handle;
}

Result<DeviceBuffer>
Session::allocate(std::size_t bytes)
{
  cl_int status = CL_SUCCESS;
  // A zero-sized buffer is invalid in OpenCL; callers with empty tensors still get a handle.
  opencl::UniqueMem mem(clCreateBuffer(m_impl->context.get(), CL_MEM_READ_WRITE, bytes == 0 ? 4 : bytes, nullptr, &status));
  PW_TRY_CTX(fmt::format("allocating {} bytes on {}", bytes, m_impl->device.description), opencl::check(status, "clCreateBuffer"));
  DeviceBuffer buffer(std::move(mem), bytes, m_impl->memory);
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
  PW_CL_CHECK(clEnqueueWriteBuffer(m_impl->queue.get(), buffer.get(), CL_TRUE, 0, bytes.size(), bytes.data(), 0, nullptr, nullptr));
  m_impl->stats.execute_seconds += seconds_since(start);
  return {};
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
  PW_CL_CHECK(clEnqueueReadBuffer(m_impl->queue.get(), buffer.get(), CL_TRUE, 0, bytes.size(), bytes.data(), 0, nullptr, nullptr));
  m_impl->stats.execute_seconds += seconds_since(start);
  return {};
}

Status
Session::launch(cl_kernel kernel, const LaunchGeometry& geometry, const KernelArgs& args)
{
  auto& impl = *m_impl;
  const auto info = impl.kernel_info.find(kernel);
  std::string name;
  if (info != impl.kernel_info.end()) {
    name = fmt::format("{}:{} [{}] local={}", info->second->source_name, info->second->kernel_name, info->second->options,
                       geometry.local_text());
  } else {
    name = fmt::format("(foreign kernel) local={}", geometry.local_text());
  }
  const auto& list = args.args();
  for (cl_uint i = 0; i < list.size(); ++i) {
    const auto& arg = list[i];
    const cl_int status = clSetKernelArg(kernel, i, arg.size, arg.bytes.empty() ? nullptr : arg.bytes.data());
    PW_TRY_CTX(fmt::format("{}: argument {}", name, i), opencl::check(status, "clSetKernelArg"));
  }
  for (cl_uint d = 0; d < geometry.dimensions; ++d) {
    if (!geometry.driver_chooses_local() && geometry.global[d] % geometry.local[d] != 0) {
      return fail(Errc::internal,
                  fmt::format("{}: global size {} is not a multiple of local size {} in dimension {}", name,
                              geometry.global[d], geometry.local[d], d));
    }
  }
  const auto start = Clock::now();
  const cl_int status = clEnqueueNDRangeKernel(impl.queue.get(), kernel, geometry.dimensions, nullptr, geometry.global.data(),
                                               geometry.driver_chooses_local() ? nullptr : geometry.local.data(), 0, nullptr,
                                               nullptr);
  impl.stats.execute_seconds += seconds_since(start);
  PW_TRY_CTX(name, opencl::check(status, "clEnqueueNDRangeKernel"));
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
  PW_CL_CHECK(clFinish(m_impl->queue.get()));
  m_impl->stats.execute_seconds += seconds_since(start);
  return {};
}

Status
Session::capture_programs()
{
  auto& impl = *m_impl;
  if (!impl.store) {
    return {};
  }
  PW_TRY(finish()); // the binaries must include what the queued launches compiled
  auto status = impl.store->capture_all();
  impl.stats.store = impl.store->counters();
  return status;
}

const SessionStats&
Session::stats() const
{
  return m_impl->stats;
}

} // namespace prewarm::engine
