// SPDX-License-Identifier: Apache-2.0
// What this build host can do for each target (the input of the plan):
// its OpenCL devices (runtime/opencl) with the PCI identity the runtime's host
// probe adds (runtime/host: NVIDIA PCI id and SM), or the PREWARM_HOST_DEVICES
// test double; and, for Intel targets, which devices
// the installed ocloc knows (prewarm/aot), and which helper programs of the
// virtual Intel device are missing (prewarm/virtual_device). Probing never fails: a missing
// OpenCL platform or ocloc is recorded, and the plan says "skip" with why.
#pragma once

#include "manifest/plan.hpp"
#include "manifest/target_registry.hpp"

namespace prewarm::bundle_build {

// Asks ocloc only about the Intel targets' devices in `registry`.
manifest::HostCapabilities probe_host_capabilities(const manifest::TargetRegistry& registry);

} // namespace prewarm::bundle_build
