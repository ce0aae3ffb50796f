// SPDX-License-Identifier: Apache-2.0
// OpenCL devices through the ICD loader. The enumeration runs in a forked
// child with a deadline: an ICD that crashes or hangs in clGetPlatformIDs
// must not stop the container from starting.
#pragma once

#include "base/error.hpp"
#include "host/host_device.hpp"

#include <chrono>
#include <vector>

namespace prewarm::host {

// True when this build has the OpenCL backend (PREWARM_WITH_OPENCL).
bool opencl_probe_available();

// No platform at all is an empty list. A crash, hang or any other failure of
// the enumeration is an error (the caller reports it and goes on without).
Result<std::vector<HostDevice>> probe_opencl_devices(std::chrono::milliseconds timeout);

} // namespace prewarm::host
