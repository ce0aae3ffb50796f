// SPDX-License-Identifier: Apache-2.0
// A Session is one OpenCL device, its context and in-order queue, and the
// programs built for it through the program store. Ops (engine/ops/) and
// workloads talk to the device only through it, so that every kernel
// specialisation and launch shape is recorded (a "variant"), timed and,
// at the end, captured into the store. When the store directory also holds
// ahead-of-time binaries for Intel GPUs (aot/), a program is first asked of
// them (store/aot_loader.hpp); any miss or rejection falls back to the store.
//
// Typical use:
//   PW_ASSIGN(auto session, Session::open({.device_selector = "", .program_store = dir}));
//   PW_ASSIGN(cl_kernel k, session.kernel("gemm.cl", "gemm_tiled", Defines().set("TILE", 16)));
//   PW_ASSIGN(auto a, session.allocate(bytes));
//   PW_TRY(session.write(a, std::span<const float>(host)));
//   PW_TRY(session.launch(k, LaunchGeometry::grid(n, m, 16, 16), KernelArgs().buffer(a)...));
//   PW_TRY(session.read(c, std::span<float>(out)));   // blocking
//   PW_TRY(session.capture_programs());                // after all launches
#pragma once

#include "base/error.hpp"
#include "engine/defines.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "opencl/device.hpp"
#include "store/program_store.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::engine {

struct SessionOptions
{
  std::string device_selector;           // see opencl::select_device
  std::filesystem::path program_store;   // empty = no store (every program built from source)
  store::StoreMode store_mode = store::StoreMode::read_write;
};

struct SessionStats
{
  // Each distinct (source, kernel, defines, local size) launched, in first
  // launch order: "gemm.cl:gemm_tiled [-DTILE=16] local=16x16".
  std::vector<std::string> variants;
  std::uint64_t launches = 0;
  double compile_seconds = 0;  // program builds (source or binary) and kernel creation
  double execute_seconds = 0;  // enqueue + finish + blocking transfers. PoCL compiles
                               // per-local-size code at first enqueue: that lands here.
  store::StoreCounters store;  // hits, misses, rejected, captured (all zero without a store)
  // AOT serving (store/aot_loader.hpp), only when the program store directory
  // holds AOT targets: which path served each program, in build order,
  // "gemm.cl [-DTILE=16]: aot acm-g11 3f2a9c01b2d4" or "...: fallback: <reason>".
  std::vector<std::string> aot_programs;
  std::uint64_t aot_served = 0;
  std::uint64_t aot_fallbacks = 0;
  std::size_t peak_device_bytes = 0; // peak of bytes allocated through allocate()
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

  const opencl::DeviceRef& device() const;
  bool has_fp16() const; // cl_khr_fp16: compute in half; otherwise store half, compute float
  cl_context context() const;
  cl_command_queue queue() const;

  // Kernel `kernel_name` of kernels/<source_name> (embedded at build time)
  // compiled with `defines` (canonical option string) through the program
  // store. Programs are cached per (source, options) and kernels per
  // (program, name) for the session's lifetime; the session owns the
  // returned kernel. Build failures carry the build log.
  Result<cl_kernel> kernel(std::string_view source_name,
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
  Status launch(cl_kernel kernel, const LaunchGeometry& geometry, const KernelArgs& args);
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
