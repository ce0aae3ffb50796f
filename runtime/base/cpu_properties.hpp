// SPDX-License-Identifier: Apache-2.0
// The CPU record's keys, part of the vocabulary of device_properties.hpp
// (host/cpu_probe.hpp reads them): every probed host has a record "CPU
// <arch>" of its own, for caches of machine code an application made on the
// CPU without OpenCL (JAX, PyTensor, OpenVINO), so that their slices require
// the CPU, not PoCL.
#pragma once

#include <string_view>

namespace prewarm::prop {
inline constexpr std::string_view cpu_arch = "cpu.arch";                   // uname machine, "x86_64"
inline constexpr std::string_view cpu_isa_level = "cpu.isa-level";         // x86-64 psABI level "1".."4" (a version)
inline constexpr std::string_view os_kernel_release = "os.kernel-release"; // uname release, "6.1.0-28-amd64"
} // namespace prewarm::prop
