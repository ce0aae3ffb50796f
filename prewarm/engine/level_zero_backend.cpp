// SPDX-License-Identifier: Apache-2.0
#include "engine/level_zero_backend.hpp"

#include "base/log.hpp"
#include "level_zero/aot_programs.hpp"
#include "level_zero/check.hpp"
#include "level_zero/session.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <optional>

namespace prewarm::engine {
namespace {

class LevelZeroBackend final : public DeviceBackend
{
public:
  explicit LevelZeroBackend(SessionStats& stats) : m_stats(stats) {}

  Status open(const SessionOptions& options);

  const SessionDevice& device() const override { return m_device_info; }
  bool has_fp16() const override { return m_has_fp16; }
  Result<Kernel> create_kernel(const ProgramText& program, std::string_view kernel_name) override;
  Result<DeviceBuffer> allocate(std::size_t bytes, std::shared_ptr<MemoryAccounting> accounting) override;
  Status write(const DeviceBuffer& buffer, std::span<const std::byte> bytes) override;
  Status read(const DeviceBuffer& buffer, std::span<std::byte> bytes) override;
  Status launch(Kernel kernel, const LaunchGeometry& geometry, const KernelArgs& args, std::string_view label) override;
  Status finish() override;
  Status capture_programs() override { return finish(); }

private:
  SessionStats& m_stats;
  // Shared so that a DeviceBuffer outliving the backend can tell: the
  // session frees all its memory when it goes.
  std::shared_ptr<level_zero::ZeSession> m_session;
  SessionDevice m_device_info;
  bool m_has_fp16 = false;
  bool m_has_aot_targets = false;
  SpirvCompiler m_spirv_compiler;
};

ze_kernel_handle_t
as_ze(Kernel kernel)
{
  return reinterpret_cast<ze_kernel_handle_t>(kernel);
}

Status
LevelZeroBackend::open(const SessionOptions& options)
{
  level_zero::ZeSessionOptions ze_options;
  ze_options.device_selector = options.device_selector.empty() ? "0" : options.device_selector;
  std::optional<level_zero::AotPrograms> aot;
  if (!options.program_store.empty()) {
    // A malformed AOT record costs the AOT binaries, not the run.
    if (auto opened = level_zero::AotPrograms::open(options.program_store); !opened) {
      log::warn("AOT programs in {} not used: {}", options.program_store.string(), opened.error().message());
    } else if (!opened->targets().empty()) {
      ze_options.aot_programs = options.program_store;
      m_has_aot_targets = true;
      aot.emplace(std::move(*opened));
    }
  }
  PW_ASSIGN(auto session, level_zero::ZeSession::open(ze_options));
  m_session = std::make_shared<level_zero::ZeSession>(std::move(session));
  const auto& device = m_session->device();
  m_device_info = {device.description, device.properties};
  // Said once here; each program's fallback is then only a verbose line.
  if (aot) {
    if (const auto selection = aot->select(device.properties); !selection.target) {
      log::info("AOT programs in {} not used for this device: {}; building from SPIR-V",
                options.program_store.string(), selection.reason);
    }
  }

  ze_device_module_properties_t module{};
  module.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  PW_ZE_CHECK(zeDeviceGetModuleProperties(device.device, &module));
  m_has_fp16 = (module.flags & ZE_DEVICE_MODULE_FLAG_FP16) != 0;
  m_spirv_compiler = options.spirv_compiler;
  log::verbose("Level Zero device {}{}", device.description, m_has_fp16 ? " (fp16)" : "");
  return {};
}

Result<Kernel>
LevelZeroBackend::create_kernel(const ProgramText& program, std::string_view kernel_name)
{
  level_zero::ZeProgramSource source;
  source.source_name = std::string(program.source_name);
  source.source = program.source;
  source.options = program.options;
  if (m_spirv_compiler) {
    source.compile_spirv = [&] { return m_spirv_compiler(program, m_device_info); };
  }
  PW_ASSIGN(ze_kernel_handle_t kernel, m_session->kernel(source, kernel_name));
  if (m_has_aot_targets) {
    // Which path served each module, as the OpenCL backend reports it. With
    // AOT programs every module is either the NATIVE binary or a fallback.
    const auto& ze = m_session->stats();
    m_stats.aot_programs = ze.aot_programs;
    m_stats.aot_served = ze.native_modules;
    m_stats.aot_fallbacks = ze.spirv_modules;
  }
  return reinterpret_cast<Kernel>(kernel);
}

Result<DeviceBuffer>
LevelZeroBackend::allocate(std::size_t bytes, std::shared_ptr<MemoryAccounting> accounting)
{
  // Zero bytes is not an allocation in Level Zero either; empty tensors still get a handle.
  PW_ASSIGN(void* pointer, m_session->allocate(bytes == 0 ? 4 : bytes, level_zero::MemoryKind::device));
  std::weak_ptr<level_zero::ZeSession> session = m_session;
  return DeviceBuffer(
    pointer,
    [session](void* p) {
      if (auto alive = session.lock()) {
        (void)alive->free(p);
      }
    },
    bytes, std::move(accounting));
}

Status
LevelZeroBackend::write(const DeviceBuffer& buffer, std::span<const std::byte> bytes)
{
  PW_TRY(m_session->copy(buffer.get(), bytes.data(), bytes.size()));
  return m_session->finish(); // blocking: the host bytes may go away on return
}

Status
LevelZeroBackend::read(const DeviceBuffer& buffer, std::span<std::byte> bytes)
{
  PW_TRY(m_session->copy(bytes.data(), buffer.get(), bytes.size()));
  return m_session->finish();
}

Status
LevelZeroBackend::launch(Kernel kernel, const LaunchGeometry& geometry, const KernelArgs& args, std::string_view label)
{
  std::array<std::uint32_t, 3> group{1, 1, 1};
  if (geometry.driver_chooses_local()) {
    const auto result = zeKernelSuggestGroupSize(as_ze(kernel), static_cast<uint32_t>(geometry.global[0]),
                                                 static_cast<uint32_t>(geometry.global[1]),
                                                 static_cast<uint32_t>(geometry.global[2]), &group[0], &group[1],
                                                 &group[2]);
    if (result != ZE_RESULT_SUCCESS) {
      return fail(level_zero::ze_error(fmt::format("{}: zeKernelSuggestGroupSize", label), result));
    }
  } else {
    for (unsigned d = 0; d < geometry.dimensions; ++d) {
      group[d] = static_cast<std::uint32_t>(geometry.local[d]);
    }
  }
  std::array<std::uint32_t, 3> groups{1, 1, 1};
  for (unsigned d = 0; d < 3; ++d) {
    if (group[d] == 0 || geometry.global[d] % group[d] != 0) {
      return fail(Errc::internal, fmt::format("{}: global size {} is not a multiple of group size {} in dimension {}",
                                              label, geometry.global[d], group[d], d));
    }
    groups[d] = static_cast<std::uint32_t>(geometry.global[d] / group[d]);
  }
  level_zero::ZeKernelArgs ze_args;
  for (const auto& arg : args.args()) {
    if (arg.bytes.empty()) {
      ze_args.local(arg.size);
    } else {
      ze_args.bytes(arg.bytes.data(), arg.bytes.size());
    }
  }
  PW_TRY_CTX(label, m_session->launch(as_ze(kernel), {groups[0], groups[1], groups[2]}, {group[0], group[1], group[2]},
                                      ze_args));
  return {};
}

Status
LevelZeroBackend::finish()
{
  return m_session->finish();
}

} // namespace

Result<std::unique_ptr<DeviceBackend>>
open_level_zero_backend(const SessionOptions& options, SessionStats& stats)
{
  auto backend = std::make_unique<LevelZeroBackend>(stats);
  PW_TRY(backend->open(options));
  return std::unique_ptr<DeviceBackend>(std::move(backend));
}

} // namespace prewarm::engine
