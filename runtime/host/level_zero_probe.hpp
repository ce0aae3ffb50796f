// SPDX-License-Identifier: Apache-2.0
// Level Zero devices through the loader (libze1), for hosts whose Intel GPU
// has a Level Zero driver and no OpenCL ICD (SYCL / IPEX images often ship
// only intel-level-zero-gpu): the PCI id and NEO driver version an AOT slice
// requires come from here then. The enumeration runs in a forked child with
// a deadline, as the OpenCL one does: a driver that crashes or hangs in
// zeInit must not stop the container from starting.
#pragma once

#include "base/error.hpp"
#include "host/host_device.hpp"

#include <chrono>
#include <vector>

namespace prewarm::host {

// True when this build has the Level Zero backend (PREWARM_HOST_WITH_LEVEL_ZERO).
bool level_zero_probe_available();

// No driver (the common case: no Intel GPU, or no Level Zero runtime in the
// image) is an empty list. A crash, hang or other failure is an error (the
// caller reports it and goes on without).
Result<std::vector<HostDevice>> probe_level_zero_devices(std::chrono::milliseconds timeout);

} // namespace prewarm::host
