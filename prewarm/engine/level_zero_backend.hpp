// SPDX-License-Identifier: Apache-2.0
// The engine's Level Zero backend, over level_zero::ZeSession: modules NATIVE
// from the AOT store when it has a target for the device, otherwise built
// from SPIR-V (the store's, else SessionOptions::spirv_compiler's), every
// fallback recorded with its reason. Buffers are device memory; transfers are
// copies on the session's command list, submitted and waited for.
//
// The OpenCL program store does not apply (it keeps OpenCL binaries): what a
// Level Zero run JIT-compiles is kept by the driver's own cache (NEO's
// NEO_CACHE_PERSISTENT / NEO_CACHE_DIR), which the build captures as its kind.
#pragma once

#include "engine/device_backend.hpp"
#include "engine/session.hpp"

#include <memory>

namespace prewarm::engine {

// An empty device selector means the first Level Zero device ("0").
Result<std::unique_ptr<DeviceBackend>> open_level_zero_backend(const SessionOptions& options, SessionStats& stats);

} // namespace prewarm::engine
