// SPDX-License-Identifier: Apache-2.0
// A device buffer from Session::allocate(). Releasing it (destruction) gives
// its bytes back to the session's accounting, which reports peak device
// memory; the accounting outlives the session if a buffer does.
#pragma once

#include "opencl/owned.hpp"

#include <cstddef>
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
  DeviceBuffer() = default;
  DeviceBuffer(opencl::UniqueMem mem, std::size_t bytes, std::shared_ptr<MemoryAccounting> accounting);
  DeviceBuffer(DeviceBuffer&&) noexcept = default;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  cl_mem get() const { return m_mem.get(); }
  std::size_t bytes() const { return m_bytes; }
  explicit operator bool() const { return static_cast<bool>(m_mem); }

private:
  void give_back();

  opencl::UniqueMem m_mem;
  std::size_t m_bytes = 0;
  std::shared_ptr<MemoryAccounting> m_accounting;
};

} // namespace prewarm::engine
