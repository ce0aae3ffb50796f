// SPDX-License-Identifier: Apache-2.0
// The engine's OpenCL backend: one device, its context and in-order queue;
// programs through the program store, Intel AOT binaries asked first when the
// store directory holds them (store/aot_loader.hpp).
#pragma once

#include "engine/device_backend.hpp"
#include "engine/session.hpp"

#include <memory>

namespace prewarm::engine {

Result<std::unique_ptr<DeviceBackend>> open_opencl_backend(const SessionOptions& options, SessionStats& stats);

} // namespace prewarm::engine
