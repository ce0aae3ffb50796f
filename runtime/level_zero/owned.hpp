// SPDX-License-Identifier: Apache-2.0
// RAII for Level Zero handles (base/owned.hpp): each destroys its handle
// once, on destruction or reset; it moves, never copies.
#pragma once

#include "base/owned.hpp"

#include <level_zero/ze_api.h>

namespace prewarm::level_zero {

using UniqueContext = Owned<ze_context_handle_t, zeContextDestroy>;
using UniqueModule = Owned<ze_module_handle_t, zeModuleDestroy>;
using UniqueBuildLog = Owned<ze_module_build_log_handle_t, zeModuleBuildLogDestroy>;
using UniqueKernel = Owned<ze_kernel_handle_t, zeKernelDestroy>;
using UniqueCommandQueue = Owned<ze_command_queue_handle_t, zeCommandQueueDestroy>;
using UniqueCommandList = Owned<ze_command_list_handle_t, zeCommandListDestroy>;
using UniqueFence = Owned<ze_fence_handle_t, zeFenceDestroy>;

} // namespace prewarm::level_zero
