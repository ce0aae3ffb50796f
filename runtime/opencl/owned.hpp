// SPDX-License-Identifier: Apache-2.0
// RAII for OpenCL handles: Owned<cl_program, clReleaseProgram> releases its
// handle exactly once. Move-only; share() retains, for the rare place that
// needs a second owner (the program store keeps programs until capture).
#pragma once

#include "opencl/cl.hpp"

#include <utility>

namespace prewarm::opencl {

template<typename Handle, cl_int(CL_API_CALL* Release)(Handle), cl_int(CL_API_CALL* Retain)(Handle)>
class Owned
{
public:
  Owned() = default;
  // Takes over one reference (what clCreate* returned).
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

  // A second owner of the same object (clRetain*).
  static Owned share(Handle handle)
  {
    if (handle != nullptr) {
      Retain(handle);
    }
    return Owned(handle);
  }

  Handle get() const { return m_handle; }
  explicit operator bool() const { return m_handle != nullptr; }
  Handle release() { return std::exchange(m_handle, nullptr); }
  void reset(Handle handle = nullptr)
  {
    if (m_handle != nullptr) {
      Release(m_handle);
    }
    m_handle = handle;
  }

private:
  Handle m_handle = nullptr;
};

using UniqueContext = Owned<cl_context, clReleaseContext, clRetainContext>;
using UniqueQueue = Owned<cl_command_queue, clReleaseCommandQueue, clRetainCommandQueue>;
using UniqueProgram = Owned<cl_program, clReleaseProgram, clRetainProgram>;
using UniqueKernel = Owned<cl_kernel, clReleaseKernel, clRetainKernel>;
using UniqueMem = Owned<cl_mem, clReleaseMemObject, clRetainMemObject>;
using UniqueEvent = Owned<cl_event, clReleaseEvent, clRetainEvent>;

} // namespace prewarm::opencl
