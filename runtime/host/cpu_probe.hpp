// SPDX-License-Identifier: Apache-2.0
// The CPU as a target of its own: what a cache of machine code made on the
// CPU (JAX's XLA executables, PyTensor's C modules, OpenVINO's blobs) depends
// on, as the properties of one host record, "CPU <arch>":
//   cpu.arch           uname's machine ("x86_64", "aarch64")
//   cpu.isa-level      x86-64 only: the psABI micro-architecture level the
//                      CPU's flags reach ("1".."4"; "3": AVX2, BMI2, FMA ...),
//                      a version, so a slice requires ">= the build's level"
//   os.kernel-release  uname's release, for applications that key their
//                      cache on it (PyTensor's compiledir_Linux-<release>-...)
// Read from uname(2) and /proc/cpuinfo, no driver: a host without any
// OpenCL device still has its CPU, so a CPU slice installs there.
#pragma once

#include "base/cpu_properties.hpp"
#include "base/device_properties.hpp"

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

namespace prewarm::host {

// The "flags" of the first processor in /proc/cpuinfo text; empty when none.
std::set<std::string, std::less<>> cpuinfo_flags(std::string_view cpuinfo);

// The x86-64 psABI level (1-4) the flags reach: 1 baseline; 2 adds cx16,
// lahf_lm, popcnt, sse4_1, sse4_2, ssse3; 3 adds avx, avx2, bmi1, bmi2,
// f16c, fma, abm (lzcnt), movbe, xsave; 4 adds avx512f, avx512bw, avx512cd,
// avx512dq, avx512vl. 0 without flags (not x86, or unreadable).
int x86_64_isa_level(const std::set<std::string, std::less<>>& flags);

// The CPU record's properties (above) of this host.
DeviceProperties probe_cpu(const std::filesystem::path& proc_root = "/proc");

// "CPU x86_64 (x86-64 level 3)" for messages.
std::string describe_cpu(const DeviceProperties& cpu);

} // namespace prewarm::host
