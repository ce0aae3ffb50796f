// SPDX-License-Identifier: Apache-2.0
#include "level_zero/session.hpp"

#include "base/log.hpp"
#include "level_zero/aot_serving.hpp"
#include "level_zero/check.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <algorithm>
#include <limits>

namespace prewarm::level_zero {

struct ZeSession::State
{
  ZeDeviceRef device;
  UniqueContext context;
  UniqueCommandQueue queue;
  UniqueCommandList list;
  UniqueFence fence;
  std::optional<AotPrograms> programs;
  struct Program
  {
    LoadedModule module;
    std::map<std::string, UniqueKernel, std::less<>> kernels;
  };
  std::map<std::string, Program, std::less<>> modules; // by "source_name options"
  std::map<ze_kernel_handle_t, std::string> kernel_labels;
  std::vector<void*> allocations;
  ZeSessionStats stats;

  ~State()
  {
    // Memory before the context that owns it; handles in reverse creation order.
    for (void* p : allocations) {
      (void)zeMemFree(context.get(), p);
    }
    modules.clear();
    fence.reset();
    list.reset();
    queue.reset();
  }
};

ZeSession::ZeSession(std::unique_ptr<State> state) : m_state(std::move(state)) {}
ZeSession::ZeSession(ZeSession&&) noexcept = default;
ZeSession& ZeSession::operator=(ZeSession&&) noexcept = default;
ZeSession::~ZeSession() = default;

namespace {

// The compute queue group: the first group that can run kernels.
Result<std::uint32_t>
compute_ordinal(ze_device_handle_t device)
{
  uint32_t count = 0;
  PW_ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(device, &count, nullptr));
  std::vector<ze_command_queue_group_properties_t> groups(count);
  for (auto& g : groups) {
    g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  }
  PW_ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(device, &count, groups.data()));
  for (uint32_t i = 0; i < count; ++i) {
    if ((groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) != 0) {
      return i;
    }
  }
  return fail(Errc::failed, "the Level Zero device has no compute queue group");
}

} // namespace

Result<ZeSession>
ZeSession::open(const ZeSessionOptions& options)
{
  auto state = std::make_unique<State>();
  PW_ASSIGN(state->device, select_device(options.device_selector));
  if (!options.aot_programs.empty()) {
    PW_ASSIGN(auto programs, AotPrograms::open(options.aot_programs));
    state->programs.emplace(std::move(programs));
  }

  ze_context_desc_t context_desc{};
  context_desc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
  ze_context_handle_t context = nullptr;
  PW_ZE_CHECK(zeContextCreate(state->device.driver, &context_desc, &context));
  state->context.reset(context);

  PW_ASSIGN(auto ordinal, compute_ordinal(state->device.device));
  ze_command_queue_desc_t queue_desc{};
  queue_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  queue_desc.ordinal = ordinal;
  queue_desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  ze_command_queue_handle_t queue = nullptr;
  PW_ZE_CHECK(zeCommandQueueCreate(context, state->device.device, &queue_desc, &queue));
  state->queue.reset(queue);

  ze_command_list_desc_t list_desc{};
  list_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
  list_desc.commandQueueGroupOrdinal = ordinal;
  ze_command_list_handle_t list = nullptr;
  PW_ZE_CHECK(zeCommandListCreate(context, state->device.device, &list_desc, &list));
  state->list.reset(list);

  ze_fence_desc_t fence_desc{};
  fence_desc.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
  ze_fence_handle_t fence = nullptr;
  PW_ZE_CHECK(zeFenceCreate(queue, &fence_desc, &fence));
  state->fence.reset(fence);
  log::verbose("level zero: {}", state->device.description);
  return ZeSession(std::move(state));
}

const ZeDeviceRef&
ZeSession::device() const
{
  return m_state->device;
}

ze_context_handle_t
ZeSession::context() const
{
  return m_state->context.get();
}

const ZeSessionStats&
ZeSession::stats() const
{
  return m_state->stats;
}

Result<ze_kernel_handle_t>
ZeSession::kernel(const ZeProgramSource& program, std::string_view kernel_name)
{
  auto& s = *m_state;
  const std::string module_key = program.source_name + " " + program.options;
  auto it = s.modules.find(module_key);
  if (it == s.modules.end()) {
    const std::string label = fmt::format("{} [{}]", program.source_name, program.options);
    LoadedModule loaded;
    if (s.programs) {
      PW_ASSIGN(auto served, serve_module(s.context.get(), s.device, *s.programs, program.source, program.options,
                                          program.spirv, label, program.compile_spirv));
      if (!served.reason.empty()) {
        s.stats.fallbacks.push_back(label + ": " + served.reason);
      }
      s.stats.aot_programs.push_back(
        served.loaded.origin == ModuleOrigin::native
          ? fmt::format("{}: aot {} {}", label, served.aot_target, served.aot_key.substr(0, 12))
          : fmt::format("{}: fallback: {}", label, served.reason));
      // Said as it happens: a run that fails later (an op check) still shows
      // which path each module took.
      log::verbose("{}: module from {}", label,
                   served.loaded.origin == ModuleOrigin::native
                     ? fmt::format("the native binary of AOT target {} ({})", served.aot_target,
                                   served.aot_key.substr(0, 12))
                     : fmt::format("SPIR-V ({})", served.reason));
      loaded = std::move(served.loaded);
    } else {
      std::string compiled;
      ModuleInputs inputs;
      inputs.spirv = program.spirv;
      inputs.label = label;
      if (inputs.spirv.empty() && program.compile_spirv) {
        PW_ASSIGN_CTX(compiled, label + ": SPIR-V", program.compile_spirv());
        inputs.spirv = compiled;
      }
      PW_ASSIGN(loaded, load_module(s.context.get(), s.device.device, inputs));
    }
    (loaded.origin == ModuleOrigin::native ? s.stats.native_modules : s.stats.spirv_modules)++;
    it = s.modules.emplace(module_key, State::Program{std::move(loaded), {}}).first;
  }
  auto& kernels = it->second.kernels;
  auto k = kernels.find(kernel_name);
  if (k == kernels.end()) {
    ze_kernel_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
    const std::string name(kernel_name);
    desc.pKernelName = name.c_str();
    ze_kernel_handle_t handle = nullptr;
    if (auto r = zeKernelCreate(it->second.module.module.get(), &desc, &handle); r != ZE_RESULT_SUCCESS) {
      return fail(ze_error(fmt::format("zeKernelCreate({} of {})", name, program.source_name), r));
    }
    k = kernels.emplace(name, UniqueKernel(handle)).first;
    s.kernel_labels[handle] = fmt::format("{}:{} [{}]", program.source_name, name, program.options);
  }
  return k->second.get();
}

Result<void*>
ZeSession::allocate(std::size_t bytes, MemoryKind kind)
{
  auto& s = *m_state;
  ze_device_mem_alloc_desc_t device_desc{};
  device_desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  void* pointer = nullptr;
  if (kind == MemoryKind::shared) {
    ze_host_mem_alloc_desc_t host_desc{};
    host_desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
    PW_ZE_CHECK(zeMemAllocShared(s.context.get(), &device_desc, &host_desc, bytes, 64, s.device.device, &pointer));
  } else {
    PW_ZE_CHECK(zeMemAllocDevice(s.context.get(), &device_desc, bytes, 64, s.device.device, &pointer));
  }
  s.allocations.push_back(pointer);
  return pointer;
}

Status
ZeSession::free(void* pointer)
{
  auto& s = *m_state;
  auto it = std::ranges::find(s.allocations, pointer);
  if (it == s.allocations.end()) {
    return fail(Errc::internal, "ZeSession::free of memory this session did not allocate");
  }
  s.allocations.erase(it);
  PW_ZE_CHECK(zeMemFree(s.context.get(), pointer));
  return {};
}

Status
ZeSession::copy(void* destination, const void* source, std::size_t bytes)
{
  PW_ZE_CHECK(zeCommandListAppendMemoryCopy(m_state->list.get(), destination, source, bytes, nullptr, 0, nullptr));
  // Later commands (a launch reading the data) must see the copy.
  PW_ZE_CHECK(zeCommandListAppendBarrier(m_state->list.get(), nullptr, 0, nullptr));
  return {};
}

Status
ZeSession::launch(ze_kernel_handle_t kernel, Dim3 groups, Dim3 group_size, const ZeKernelArgs& args)
{
  auto& s = *m_state;
  PW_ZE_CHECK(zeKernelSetGroupSize(kernel, group_size.x, group_size.y, group_size.z));
  const auto& values = args.args();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto index = static_cast<uint32_t>(i);
    if (auto local = args.local_size(i)) {
      PW_ZE_CHECK(zeKernelSetArgumentValue(kernel, index, *local, nullptr));
    } else {
      PW_ZE_CHECK(zeKernelSetArgumentValue(kernel, index, values[i].size(), values[i].data()));
    }
  }
  ze_group_count_t count{groups.x, groups.y, groups.z};
  PW_ZE_CHECK(zeCommandListAppendLaunchKernel(s.list.get(), kernel, &count, nullptr, 0, nullptr));
  PW_ZE_CHECK(zeCommandListAppendBarrier(s.list.get(), nullptr, 0, nullptr));
  ++s.stats.launches;
  const auto variant = fmt::format("{} group={}x{}x{}", s.kernel_labels[kernel], group_size.x, group_size.y,
                                   group_size.z);
  if (std::ranges::find(s.stats.variants, variant) == s.stats.variants.end()) {
    s.stats.variants.push_back(variant);
  }
  return {};
}

Status
ZeSession::finish()
{
  auto& s = *m_state;
  const auto submit = [&]() -> Status {
    PW_ZE_CHECK(zeCommandListClose(s.list.get()));
    ze_command_list_handle_t list = s.list.get();
    PW_ZE_CHECK(zeCommandQueueExecuteCommandLists(s.queue.get(), 1, &list, s.fence.get()));
    PW_ZE_CHECK(zeFenceHostSynchronize(s.fence.get(), std::numeric_limits<uint64_t>::max()));
    return {};
  };
  auto submitted = submit();
  // Reset even after a failure: a closed list would refuse every later append.
  const auto fence_reset = zeFenceReset(s.fence.get());
  const auto list_reset = zeCommandListReset(s.list.get());
  PW_TRY(submitted);
  PW_ZE_CHECK(fence_reset);
  PW_ZE_CHECK(list_reset);
  return {};
}

} // namespace prewarm::level_zero
