// SPDX-License-Identifier: Apache-2.0
// A cheap identity of what probe_host() would find, so that a repeated
// install (every container start) can tell "the same host as at install"
// without enumerating devices: the OpenCL enumeration in a forked child costs
// most of a second with PoCL, the whole of an install that has nothing to do.
//
// What goes in, each read without loading a driver (a few stat() and small
// reads; the whole no-op install, signature included, took 1-15 ms in
// process on a 2-core machine at load 15):
//   - the environment variables that steer the loaders and drivers
//     (OCL_ICD_*, OPENCL_*, POCL_* but the cache, ZE_*, CUDA_/NVIDIA_VISIBLE_DEVICES,
//     PREWARM_HOST_DEVICES and the test double's file content, PREWARM_PYTHON, PATH);
//   - the CPU model (/proc/cpuinfo: PoCL names its device after it);
//   - the display-class PCI devices (sysfs: address, ids, revision, class);
//   - /proc/driver/nvidia/version (the kernel driver);
//   - every ICD file of the OpenCL vendors directory (OCL_ICD_VENDORS, else
//     /etc/OpenCL/vendors): path, size, mtime, content, and the identity of
//     the library it names (resolved path, size, mtime: a driver update
//     replaces it);
//   - the OpenCL and Level Zero loaders and the Level Zero GPU drivers
//     (libOpenCL.so.1, libze_loader.so.1, libze_intel_gpu.so.1 and
//     ZE_ENABLE_ALT_DRIVERS) and Intel's graphics compiler (libigc.so.2,
//     whose identity NEO's cache keys hash): resolved path, size, mtime;
//   - options.frameworks.wanted: the application's framework versions and
//     where they came from (framework_probe.hpp: read from the recorded
//     site-packages without running Python, else the Python probe, ~30 ms),
//     for bundles whose slices require framework.* keys.
// Anything that differs (a driver upgrade, another GPU, the volume moved to
// another machine) gives another fingerprint, and the install then probes
// the host in full as before. The fingerprint never decides which slices
// apply; it only says that the decision made at install time still holds.
#pragma once

#include "host/probe_host.hpp"

#include <string>

namespace prewarm::host {

// The canonical text the fingerprint is the digest of (one "source value"
// line each; for tests and `--verbose` diagnosis).
std::string host_fingerprint_text(const HostProbeOptions& options);

// SHA-256 (lowercase hex) of host_fingerprint_text().
std::string host_fingerprint(const HostProbeOptions& options);

} // namespace prewarm::host
