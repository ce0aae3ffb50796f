// SPDX-License-Identifier: Apache-2.0
// RAII for a C API's handles: Owned<cl_program, clReleaseProgram> releases
// (destroys) its handle exactly once, on destruction or reset; it moves,
// never copies. With a Retain function (OpenCL's reference counts), share()
// makes a second owner, for the rare place that needs one. The aliases per
// API are in opencl/owned.hpp and level_zero/owned.hpp.
#pragma once

#include <type_traits>
#include <utility>

namespace prewarm {

template<typename Handle, auto Release, auto Retain = nullptr>
class Owned
{
public:
  Owned() = default;
  // Takes over one reference (what the create call returned).
  explicit Owned(Handle handle) : m_handle(handle) {}
  Owned(Owned&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  Owned& operator=(Owned&& other) noexcept
  {
    if (this != &other) {
      reset(std::exchange(other.m_handle, nullptr));
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  // A second owner of the same object (Retain, e.g. clRetainContext).
  static Owned share(Handle handle)
    requires(!std::is_null_pointer_v<decltype(Retain)>)
  {
    if (handle != nullptr) {
      (void)Retain(handle);
    }
    return Owned(handle);
  }

  Handle get() const { return m_handle; }
  explicit operator bool() const { return m_handle != nullptr; }
  Handle release() { return std::exchange(m_handle, nullptr); }
  void reset(Handle handle = nullptr)
  {
    if (m_handle != nullptr) {
      // A release failure leaves nothing to do: the handle is gone either way.
      (void)Release(m_handle);
    }
    m_handle = handle;
  }

private:
  Handle m_handle = nullptr;
};

} // namespace prewarm
