// SPDX-License-Identifier: Apache-2.0
#include "engine/opencl_backend.hpp"

#include "base/encoding.hpp"
#include "base/log.hpp"
#include "opencl/check.hpp"
#include "opencl/device.hpp"
#include "opencl/program.hpp"
#include "store/aot_loader.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <utility>

namespace prewarm::engine {
namespace {

class OpenclBackend final : public DeviceBackend
{
public:
  explicit OpenclBackend(SessionStats& stats) : m_stats(stats) {}

  Status open(const SessionOptions& options);

  const SessionDevice& device() const override { return m_device_info; }
  bool has_fp16() const override { return m_has_fp16; }
  Result<Kernel> create_kernel(const ProgramText& program, std::string_view kernel_name) override;
  Result<DeviceBuffer> allocate(std::size_t bytes, std::shared_ptr<MemoryAccounting> accounting) override;
  Status write(const DeviceBuffer& buffer, std::span<const std::byte> bytes) override;
  Status read(const DeviceBuffer& buffer, std::span<std::byte> bytes) override;
  Status launch(Kernel kernel, const LaunchGeometry& geometry, const KernelArgs& args, std::string_view label) override;
  Status finish() override;
  Status capture_programs() override;

private:
  Result<cl_program> program(const ProgramText& program);

  SessionStats& m_stats;
  opencl::DeviceRef m_device;
  SessionDevice m_device_info;
  bool m_has_fp16 = false;
  opencl::UniqueContext m_context;
  opencl::UniqueQueue m_queue;
  std::optional<store::ProgramStore> m_store;
  std::optional<level_zero::AotPrograms> m_aot; // set only when the store directory has AOT targets
  // Declared after the store: destroyed first, the store's own references last.
  std::map<std::pair<std::string, std::string>, opencl::UniqueProgram, std::less<>> m_programs;
  std::vector<opencl::UniqueKernel> m_kernels;
};

cl_kernel
as_cl(Kernel kernel)
{
  return reinterpret_cast<cl_kernel>(kernel);
}

Status
OpenclBackend::open(const SessionOptions& options)
{
  PW_ASSIGN(m_device, opencl::select_device(options.device_selector));
  m_device_info = {m_device.description, m_device.properties};
  m_has_fp16 = opencl::device_has_extension(m_device.device, "cl_khr_fp16");

  cl_int status = CL_SUCCESS;
  const cl_context_properties properties[] = {
    CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(m_device.platform), 0};
  m_context = opencl::UniqueContext(clCreateContext(properties, 1, &m_device.device, nullptr, nullptr, &status));
  PW_TRY_CTX(m_device.description, opencl::check(status, "clCreateContext"));
  m_queue = opencl::UniqueQueue(clCreateCommandQueue(m_context.get(), m_device.device, 0, &status));
  PW_TRY_CTX(m_device.description, opencl::check(status, "clCreateCommandQueue"));

  if (!options.program_store.empty()) {
    PW_ASSIGN(auto store, store::ProgramStore::open(options.program_store, options.store_mode));
    m_store.emplace(std::move(store));
    // A malformed AOT record costs the AOT binaries, not the run: every
    // program can still be built through the store.
    if (auto aot = level_zero::AotPrograms::open(options.program_store); !aot) {
      log::warn("AOT programs in {} not used: {}", in_quotes(options.program_store.string()), aot.error().message());
    } else if (!aot->targets().empty()) {
      // Said once here; each program's fallback is then only a verbose line.
      if (const auto selection = aot->select(store::aot_device_properties(m_device)); !selection.target) {
        log::info("AOT programs in {} not used for this device: {}", in_quotes(options.program_store.string()),
                  selection.reason);
      }
      m_aot.emplace(std::move(*aot));
    }
  }
  log::verbose("OpenCL device {}{}", m_device.description, m_has_fp16 ? " (cl_khr_fp16)" : "");
  return {};
}

Result<cl_program>
OpenclBackend::program(const ProgramText& text)
{
  const auto key = std::make_pair(std::string(text.source_name), text.options);
  if (const auto it = m_programs.find(key); it != m_programs.end()) {
    return it->second.get();
  }
  opencl::UniqueProgram built;
  if (m_aot) {
    auto load = store::load_aot_program(m_context.get(), m_device, *m_aot, text.source, text.options);
    const auto label = text.label();
    m_stats.aot_programs.push_back(fmt::format("{}: {}", label, load.summary()));
    if (load.served()) {
      ++m_stats.aot_served;
      built = std::move(load.program);
      log::verbose("{}: served from the AOT binary ({})", label, load.summary());
    } else {
      ++m_stats.aot_fallbacks;
      // A device no target serves says so for every program: only worth a
      // verbose line. A selected target that fails is news.
      if (load.target.empty()) {
        log::verbose("{}: AOT binaries not used ({}); building through the program store", label, load.reason);
      } else {
        log::info("{}: AOT binary not used ({}); building through the program store", label, load.reason);
      }
    }
  }
  if (!built && m_store) {
    PW_ASSIGN(auto result, m_store->build_program(m_context.get(), m_device, text.source, text.options));
    built = std::move(result.program);
    m_stats.store = m_store->counters();
  } else if (!built) {
    PW_ASSIGN(built, opencl::build_from_source(m_context.get(), m_device.device, text.source, text.options));
  }
  const cl_program handle = built.get();
  m_programs.emplace(key, std::move(built));
  return handle;
}

Result<Kernel>
OpenclBackend::create_kernel(const ProgramText& text, std::string_view kernel_name)
{
  PW_ASSIGN(const cl_program program, this->program(text));
  const std::string name(kernel_name);
  cl_int status = CL_SUCCESS;
  opencl::UniqueKernel kernel(clCreateKernel(program, name.c_str(), &status));
  PW_TRY(opencl::check(status, "clCreateKernel"));
  m_kernels.push_back(std::move(kernel));
  return reinterpret_cast<Kernel>(m_kernels.back().get());
}

Result<DeviceBuffer>
OpenclBackend::allocate(std::size_t bytes, std::shared_ptr<MemoryAccounting> accounting)
{
  cl_int status = CL_SUCCESS;
  // A zero-sized buffer is invalid in OpenCL; callers with empty tensors still get a handle.
  cl_mem mem = clCreateBuffer(m_context.get(), CL_MEM_READ_WRITE, bytes == 0 ? 4 : bytes, nullptr, &status);
  PW_TRY_CTX(fmt::format("allocating {} bytes on {}", bytes, m_device.description), opencl::check(status, "clCreateBuffer"));
  return DeviceBuffer(mem, [](void* handle) { clReleaseMemObject(static_cast<cl_mem>(handle)); }, bytes,
                      std::move(accounting));
}

Status
OpenclBackend::write(const DeviceBuffer& buffer, std::span<const std::byte> bytes)
{
  PW_CL_CHECK(clEnqueueWriteBuffer(m_queue.get(), static_cast<cl_mem>(buffer.get()), CL_TRUE, 0, bytes.size(),
                                   bytes.data(), 0, nullptr, nullptr));
  return {};
}

Status
OpenclBackend::read(const DeviceBuffer& buffer, std::span<std::byte> bytes)
{
  PW_CL_CHECK(clEnqueueReadBuffer(m_queue.get(), static_cast<cl_mem>(buffer.get()), CL_TRUE, 0, bytes.size(),
                                  bytes.data(), 0, nullptr, nullptr));
  return {};
}

Status
OpenclBackend::launch(Kernel kernel, const LaunchGeometry& geometry, const KernelArgs& args, std::string_view label)
{
  const auto& list = args.args();
  for (cl_uint i = 0; i < list.size(); ++i) {
    const auto& arg = list[i];
    const cl_int status = clSetKernelArg(as_cl(kernel), i, arg.size, arg.bytes.empty() ? nullptr : arg.bytes.data());
    PW_TRY_CTX(fmt::format("{}: argument {}", label, i), opencl::check(status, "clSetKernelArg"));
  }
  const cl_int status =
    clEnqueueNDRangeKernel(m_queue.get(), as_cl(kernel), geometry.dimensions, nullptr, geometry.global.data(),
                           geometry.driver_chooses_local() ? nullptr : geometry.local.data(), 0, nullptr, nullptr);
  PW_TRY_CTX(label, opencl::check(status, "clEnqueueNDRangeKernel"));
  return {};
}

Status
OpenclBackend::finish()
{
  PW_CL_CHECK(clFinish(m_queue.get()));
  return {};
}

Status
OpenclBackend::capture_programs()
{
  if (!m_store) {
    return {};
  }
  PW_TRY(finish()); // the binaries must include what the queued launches compiled
  auto status = m_store->capture_all();
  m_stats.store = m_store->counters();
  return status;
}

} // namespace

Result<std::unique_ptr<DeviceBackend>>
open_opencl_backend(const SessionOptions& options, SessionStats& stats)
{
  auto backend = std::make_unique<OpenclBackend>(stats);
  PW_TRY(backend->open(options));
  return std::unique_ptr<DeviceBackend>(std::move(backend));
}

} // namespace prewarm::engine
