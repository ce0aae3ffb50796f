// SPDX-License-Identifier: Apache-2.0
// The device API under a Session. The Session keeps what every backend
// shares (kernel cache, variants, timings, memory accounting); a backend only
// turns a program into a kernel and moves bytes and launches:
//   OpenCL      (engine/opencl_backend.hpp)  programs through the program store,
//                                            Intel AOT binaries first when present
//   Level Zero  (engine/level_zero_backend.hpp)  modules NATIVE from the AOT store,
//                                            else SPIR-V (store or ocloc)
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "engine/session_stats.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::engine {

enum class Backend { opencl, level_zero };
std::string_view to_string(Backend backend);        // "opencl", "level-zero"
Result<Backend> parse_backend(std::string_view text); // Errc::usage for anything else

// A kernel made by the session's backend (cl_kernel or ze_kernel_handle_t);
// the session owns it. Ops only pass it back to Session::launch.
struct KernelObject;
using Kernel = KernelObject*;

struct SessionDevice
{
  std::string description;
  DeviceProperties properties;
};

// One program of the engine: an embedded kernels/*.cl file and its options.
struct ProgramText
{
  std::string_view source_name; // "gemm.cl"
  std::string_view source;      // its OpenCL C
  std::string options;          // Defines::options()
  std::string label() const;    // "gemm.cl [-DTILE=16]"
};

// A backend fills the SessionStats it was opened with: store counters and
// which path served each program (aot_*); the Session fills the rest.
class DeviceBackend
{
public:
  virtual ~DeviceBackend() = default;

  virtual const SessionDevice& device() const = 0;
  virtual bool has_fp16() const = 0;

  // Builds (or serves) the program once per session and creates a kernel of
  // it; the backend owns the kernel.
  virtual Result<Kernel> create_kernel(const ProgramText& program, std::string_view kernel_name) = 0;

  virtual Result<DeviceBuffer> allocate(std::size_t bytes, std::shared_ptr<MemoryAccounting> accounting) = 0;
  // Blocking: the bytes are on the device (or back on the host) on return.
  virtual Status write(const DeviceBuffer& buffer, std::span<const std::byte> bytes) = 0;
  virtual Status read(const DeviceBuffer& buffer, std::span<std::byte> bytes) = 0;
  // `label` names the variant in errors.
  virtual Status launch(Kernel kernel, const LaunchGeometry& geometry, const KernelArgs& args, std::string_view label) = 0;
  virtual Status finish() = 0;
  // After the last launch: keep what this session compiled (program store).
  virtual Status capture_programs() = 0;
};

} // namespace prewarm::engine
