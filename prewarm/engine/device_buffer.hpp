// SPDX-License-Identifier: Apache-2.0
// A device buffer from Session::allocate(): an OpenCL cl_mem or a Level Zero
// device pointer, whichever the session's backend made, released by the
// backend's function. Releasing it (destruction) gives its bytes back to the
// session's accounting, which reports peak device memory; the accounting
// outlives the session if a buffer does.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace prewarm::engine {

struct MemoryAccounting
{
  std::size_t current_bytes = 0;
  std::size_t peak_bytes = 0;
};

class DeviceBuffer
{
public:
  using Release = std::function<void(void*)>;

  DeviceBuffer() = default;
  DeviceBuffer(void* handle, Release release, std::size_t bytes, std::shared_ptr<MemoryAccounting> accounting);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // The backend's handle: what a kernel argument passes (cl_mem or the
  // device pointer; both are pointer-sized, see KernelArgs::buffer).
  void* get() const { return m_handle; }
  std::size_t bytes() const { return m_bytes; }
  explicit operator bool() const { return m_handle != nullptr; }

private:
  void give_back();

  void* m_handle = nullptr;
  Release m_release;
  std::size_t m_bytes = 0;
  std::shared_ptr<MemoryAccounting> m_accounting;
};

} // namespace prewarm::engine
