// SPDX-License-Identifier: Apache-2.0
#include "engine/device_buffer.hpp"

#include <algorithm>
#include <utility>

namespace prewarm::engine {

DeviceBuffer::DeviceBuffer(void* handle, Release release, std::size_t bytes, std::shared_ptr<MemoryAccounting> accounting)
  : m_handle(handle),
    m_release(std::move(release)),
    m_bytes(bytes),
    m_accounting(std::move(accounting))
{
  if (m_accounting) {
    m_accounting->current_bytes += m_bytes;
    m_accounting->peak_bytes = std::max(m_accounting->peak_bytes, m_accounting->current_bytes);
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
  : m_handle(std::exchange(other.m_handle, nullptr)),
    m_release(std::move(other.m_release)),
    m_bytes(std::exchange(other.m_bytes, 0)),
    m_accounting(std::move(other.m_accounting))
{
}

DeviceBuffer&
DeviceBuffer::operator=(DeviceBuffer&& other) noexcept
{
  if (this != &other) {
    give_back();
    m_handle = std::exchange(other.m_handle, nullptr);
    m_release = std::move(other.m_release);
    m_bytes = std::exchange(other.m_bytes, 0);
    m_accounting = std::move(other.m_accounting);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer()
{
  give_back();
}

void
DeviceBuffer::give_back()
{
  if (m_handle != nullptr) {
    if (m_accounting) {
      m_accounting->current_bytes -= m_bytes;
    }
    if (m_release) {
      m_release(m_handle);
    }
  }
  m_handle = nullptr;
  m_release = nullptr;
  m_accounting.reset();
  m_bytes = 0;
}

} // namespace prewarm::engine
