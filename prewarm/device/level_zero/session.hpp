// SPDX-License-Identifier: Apache-2.0
// A Level Zero session: one explicitly selected device, its context, a
// command queue with a regular command list and a fence, the modules built
// for it (AOT zebin served NATIVE when the programs store has one, otherwise
// SPIR-V), memory, kernel arguments and launches. It is the engine's Level
// Zero backend; it never picks a device on its own.
//
//   PW_ASSIGN(auto s, ZeSession::open({.device_selector = "0", .aot_programs = dir}));
//   PW_ASSIGN(auto k, s.kernel({.source_name = "gemm.cl", .source = src, .options = "-DTILE=16",
//                               .spirv = spv}, "gemm"));
//   PW_ASSIGN(void* a, s.allocate(bytes, MemoryKind::device));
//   PW_TRY(s.copy(a, host.data(), bytes));
//   PW_TRY(s.launch(k, {n / 16, m / 16, 1}, {16, 16, 1}, ZeKernelArgs().value(m).pointer(a)...));
//   PW_TRY(s.finish());   // submits, waits on the fence
#pragma once

#include "base/error.hpp"
#include "level_zero/aot_programs.hpp"
#include "level_zero/device.hpp"
#include "level_zero/module.hpp"
#include "level_zero/owned.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::level_zero {

struct ZeSessionOptions
{
  std::string device_selector;          // required: see select_device()
  std::filesystem::path aot_programs;   // a programs cache directory; empty = SPIR-V only
};

struct ZeProgramSource
{
  std::string source_name;   // "gemm.cl"
  std::string_view source;   // OpenCL C (the AOT key; Level Zero cannot build it)
  std::string options;       // "-DTILE=16"
  std::string_view spirv;    // SPIR-V of source+options (ocloc -spv_only); may be empty
                             // when the AOT store has it
  // Asked only when a module must be built from SPIR-V and neither `spirv`
  // nor the AOT store has it (the builder passes ocloc); may be empty.
  std::function<Result<std::string>()> compile_spirv;
};

// Kernel arguments in order: pointers to device/shared memory, or values.
class ZeKernelArgs
{
public:
  ZeKernelArgs& pointer(const void* device_pointer)
  {
    std::string bytes(sizeof device_pointer, '\0');
    std::memcpy(bytes.data(), &device_pointer, sizeof device_pointer);
    m_args.push_back(std::move(bytes));
    return *this;
  }
  template<typename T>
  ZeKernelArgs& value(const T& v)
  {
    static_assert(std::is_trivially_copyable_v<T>);
    std::string bytes(sizeof v, '\0');
    std::memcpy(bytes.data(), &v, sizeof v);
    m_args.push_back(std::move(bytes));
    return *this;
  }
  ZeKernelArgs& bytes(const void* data, std::size_t size) // a value already in its kernel representation
  {
    m_args.emplace_back(static_cast<const char*>(data), size);
    return *this;
  }
  ZeKernelArgs& local(std::size_t bytes) // __local buffer: size only, no value
  {
    m_local.emplace(m_args.size(), bytes);
    m_args.emplace_back();
    return *this;
  }
  const std::vector<std::string>& args() const { return m_args; }
  std::optional<std::size_t> local_size(std::size_t index) const
  {
    auto it = m_local.find(index);
    return it == m_local.end() ? std::nullopt : std::optional(it->second);
  }

private:
  std::vector<std::string> m_args;
  std::map<std::size_t, std::size_t> m_local;
};

enum class MemoryKind { device, shared };

struct Dim3
{
  std::uint32_t x = 1, y = 1, z = 1;
};

struct ZeSessionStats
{
  std::uint64_t launches = 0;
  std::uint64_t native_modules = 0;  // AOT zebins loaded NATIVE
  std::uint64_t spirv_modules = 0;   // built from SPIR-V (JIT)
  std::vector<std::string> fallbacks; // "<label>: <why the AOT binary was not used>"
  std::vector<std::string> variants;  // "gemm.cl:gemm [-DTILE=16] group=16x16x1"
  // One per module, in creation order: "gemm.cl [-DTILE=16]: aot acm-g11 3f2a9c01b2d4"
  // (NATIVE) or "gemm.cl [-DTILE=16]: fallback: <reason>" (SPIR-V); only when
  // the session has an AOT programs directory.
  std::vector<std::string> aot_programs;
};

class ZeSession
{
public:
  static Result<ZeSession> open(const ZeSessionOptions& options);
  ZeSession(ZeSession&&) noexcept;
  ZeSession& operator=(ZeSession&&) noexcept;
  ZeSession(const ZeSession&) = delete;
  ZeSession& operator=(const ZeSession&) = delete;
  ~ZeSession();

  const ZeDeviceRef& device() const;
  ze_context_handle_t context() const;

  // Kernel `kernel_name` of the program; modules are cached per (source name,
  // options) for the session's lifetime, and the session owns the kernel.
  Result<ze_kernel_handle_t> kernel(const ZeProgramSource& program, std::string_view kernel_name);

  Result<void*> allocate(std::size_t bytes, MemoryKind kind);
  Status free(void* pointer);
  // Appended to the command list; done after finish().
  Status copy(void* destination, const void* source, std::size_t bytes);
  Status launch(ze_kernel_handle_t kernel, Dim3 groups, Dim3 group_size, const ZeKernelArgs& args);
  // Closes the command list, submits it, waits on the fence, resets both.
  Status finish();

  const ZeSessionStats& stats() const;

private:
  struct State;
  explicit ZeSession(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

} // namespace prewarm::level_zero
