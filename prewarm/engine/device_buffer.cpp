// SPDX-License-Identifier: Apache-2.0
#include "engine/device_buffer.hpp"

#include <algorithm>
#include <utility>

namespace prewarm::engine {

DeviceBuffer::DeviceBuffer(opencl::UniqueMem mem, std::size_t bytes, std::shared_ptr<MemoryAccounting> accounting)
  : m_mem(std::move(mem)),
    m_bytes(bytes),
    m_accounting(std::move(accounting))
{
  if (m_accounting) {
    m_accounting->current_bytes += m_bytes;
    m_accounting->peak_bytes = std::max(m_accounting->peak_bytes, m_accounting->current_bytes);
  }
}

DeviceBuffer&
DeviceBuffer::operator=(DeviceBuffer&& other) noexcept
{
  if (this != &other) {
    give_back();
    m_mem = std::move(other.m_mem);
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
  if (m_accounting && m_mem) {
    m_accounting->current_bytes -= m_bytes;
  }
  m_mem.reset();
  m_accounting.reset();
  m_bytes = 0;
}

} // namespace prewarm::engine
