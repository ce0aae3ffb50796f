// SPDX-License-Identifier: Apache-2.0
// RAII for Level Zero handles: Owned<ze_module_handle_t, zeModuleDestroy>
// destroys its handle once, on destruction or reset; it moves, never copies.
#pragma once

#include <level_zero/ze_api.h>

#include <utility>

namespace prewarm::level_zero {

template<typename Handle, ze_result_t (*Destroy)(Handle)>
class Owned
{
public:
  Owned() = default;
  explicit Owned(Handle handle) : m_handle(handle) {}
  Owned(Owned&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  Owned& operator=(Owned&& other) noexcept
  {
    if (this != &other) {
      reset(std::exchange(other.m_handle, nullptr));
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  Handle get() const { return m_handle; }
  explicit operator bool() const { return m_handle != nullptr; }
  Handle release() { return std::exchange(m_handle, nullptr); }
  void reset(Handle handle = nullptr)
  {
    if (m_handle != nullptr) {
      // A destroy failure leaves nothing to do: the handle is gone either way.
      (void)Destroy(m_handle);
    }
    m_handle = handle;
  }

private:
  Handle m_handle = nullptr;
};

using UniqueContext = Owned<ze_context_handle_t, zeContextDestroy>;
using UniqueModule = Owned<ze_module_handle_t, zeModuleDestroy>;
using UniqueBuildLog = Owned<ze_module_build_log_handle_t, zeModuleBuildLogDestroy>;
using UniqueKernel = Owned<ze_kernel_handle_t, zeKernelDestroy>;
using UniqueCommandQueue = Owned<ze_command_queue_handle_t, zeCommandQueueDestroy>;
using UniqueCommandList = Owned<ze_command_list_handle_t, zeCommandListDestroy>;
using UniqueFence = Owned<ze_fence_handle_t, zeFenceDestroy>;

} // namespace prewarm::level_zero
