// SPDX-License-Identifier: Apache-2.0
// What one kernel launch needs besides the kernel: its geometry and its
// arguments, in order.
#pragma once

#include "engine/device_buffer.hpp"

#include "opencl/cl.hpp" // cl_int, cl_uint, cl_half: the kernels' argument types

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace prewarm::engine {

// Global and local sizes, 1 to 3 dimensions. The global size must be a
// multiple of the local size in each dimension (OpenCL 1.2 rule): use
// round_up(). A local size of all zeros lets the driver choose (recorded as
// "auto" in the variant).
struct LaunchGeometry
{
  unsigned dimensions = 1;
  std::array<std::size_t, 3> global{1, 1, 1};
  std::array<std::size_t, 3> local{0, 0, 0};

  static LaunchGeometry linear(std::size_t global, std::size_t local);
  static LaunchGeometry grid(std::size_t global_x, std::size_t global_y, std::size_t local_x, std::size_t local_y);
  static LaunchGeometry grid(std::array<std::size_t, 3> global, std::array<std::size_t, 3> local);

  bool driver_chooses_local() const { return local[0] == 0; }
  std::string local_text() const; // "16x16", "64", "auto"
};

constexpr std::size_t
round_up(std::size_t value, std::size_t multiple)
{
  return multiple == 0 ? value : (value + multiple - 1) / multiple * multiple;
}

// Arguments in kernel order: .buffer(a).buffer(b).value(n).value(alpha).local(bytes).
// value() takes trivially copyable scalars/vectors exactly as the kernel
// declares them (int -> cl_int, float, cl_uint, cl_half as uint16_t ...).
class KernelArgs
{
public:
  KernelArgs& buffer(const DeviceBuffer& buffer);
  KernelArgs& local(std::size_t bytes); // __local scratch

  template<typename T>
  KernelArgs& value(const T& v)
  {
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are copied bytewise");
    Arg arg;
    arg.size = sizeof(T);
    arg.bytes.resize(sizeof(T));
    std::memcpy(arg.bytes.data(), &v, sizeof(T));
    m_args.push_back(std::move(arg));
    return *this;
  }

  struct Arg
  {
    std::size_t size = 0;             // clSetKernelArg / zeKernelSetArgumentValue size
    std::vector<unsigned char> bytes; // empty = __local (value NULL)
    void* buffer = nullptr;           // set for buffers: DeviceBuffer::get()
  };
  const std::vector<Arg>& args() const { return m_args; }

private:
  std::vector<Arg> m_args;
};

} // namespace prewarm::engine
