// SPDX-License-Identifier: Apache-2.0
// A Session is one device, through one backend (OpenCL by default, or Level
// Zero), and the programs built for it. Ops (engine/ops/) and workloads talk
// to the device only through it, so that every kernel specialisation and
// launch shape is recorded (a "variant"), timed and, at the end, captured
// into the program store. When the store directory also holds ahead-of-time
// binaries for Intel GPUs (aot/), a program is first asked of them
// (OpenCL: store/aot_loader.hpp; Level Zero: NATIVE modules); any miss or
// rejection falls back to the store / SPIR-V, and the report says why.
//
// Typical use:
//   PW_ASSIGN(auto session, Session::open({.device_selector = "", .program_store = dir}));
//   PW_ASSIGN(Kernel k, session.kernel("gemm.cl", "gemm_tiled", Defines().set("TILE", 16)));
//   PW_ASSIGN(auto a, session.allocate(bytes));
//   PW_TRY(session.write(a, std::span<const float>(host)));
//   PW_TRY(session.launch(k, LaunchGeometry::grid(n, m, 16, 16), KernelArgs().buffer(a)...));
//   PW_TRY(session.read(c, std::span<float>(out)));   // blocking
//   PW_TRY(session.capture_programs());                // after all launches
#pragma once

#include "base/error.hpp"
#include "engine/defines.hpp"
#include "engine/device_backend.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "engine/session_stats.hpp"
#include "store/program_store.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::engine {

// SPIR-V of a program for a device (Level Zero cannot build OpenCL C). The
// builder supplies ocloc's (prewarm/aot); the engine itself does not link ocloc.
using SpirvCompiler = std::function<Result<std::string>(const ProgramText& program, const SessionDevice& device)>;

struct SessionOptions
{
  std::string device_selector;           // OpenCL: opencl::select_device; Level Zero: level_zero::select_device
  std::filesystem::path program_store;   // empty = no store (every program built from source)
  store::StoreMode store_mode = store::StoreMode::read_write;
  Backend backend = Backend::opencl;
  // Level Zero only: used when the AOT store has neither a NATIVE binary for
  // the device nor SPIR-V for the program. Empty: such a program is an error.
  SpirvCompiler spirv_compiler;
};

class Session
{
public:
  static Result<Session> open(const SessionOptions& options);

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  const SessionDevice& device() const;
  Backend backend() const;
  bool has_fp16() const; // fp16 arithmetic: compute in half; otherwise store half, compute float

  // Kernel `kernel_name` of kernels/<source_name> (embedded at build time)
  // compiled with `defines` (canonical option string) through the program
  // store. Programs are cached per (source, options) and kernels per
  // (program, name) for the session's lifetime; the session owns the
  // returned kernel. Build failures carry the build log.
  Result<Kernel> kernel(std::string_view source_name,
                        std::string_view kernel_name,
                        const Defines& defines = {});

  Result<DeviceBuffer> allocate(std::size_t bytes);

  // Blocking transfers; sizes must not exceed the buffer's.
  Status write_bytes(const DeviceBuffer& buffer, std::span<const std::byte> bytes);
  Status read_bytes(const DeviceBuffer& buffer, std::span<std::byte> bytes);
  template<typename T>
  Status write(const DeviceBuffer& buffer, std::span<const T> host)
  {
    return write_bytes(buffer, std::as_bytes(host));
  }
  template<typename T>
  Status read(const DeviceBuffer& buffer, std::span<T> host)
  {
    return read_bytes(buffer, std::as_writable_bytes(host));
  }

  // Sets the arguments and enqueues; records the variant.
  Status launch(Kernel kernel, const LaunchGeometry& geometry, const KernelArgs& args);
  Status finish();

  // Stores every program built this session (not served from the store)
  // into the store. Call after all launches (see ProgramStore::capture).
  // Without a store, or read-only: nothing to do.
  Status capture_programs();

  const SessionStats& stats() const;

private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace prewarm::engine
