// SPDX-License-Identifier: Apache-2.0
#include "engine/launch.hpp"

#include <fmt/format.h>

namespace prewarm::engine {

LaunchGeometry
LaunchGeometry::linear(std::size_t global, std::size_t local)
{
  return LaunchGeometry{1, {global, 1, 1}, {local, local == 0 ? 0u : 1u, local == 0 ? 0u : 1u}};
}

LaunchGeometry
LaunchGeometry::grid(std::size_t global_x, std::size_t global_y, std::size_t local_x, std::size_t local_y)
{
  return LaunchGeometry{2, {global_x, global_y, 1}, {local_x, local_y, local_x == 0 ? 0u : 1u}};
}

LaunchGeometry
LaunchGeometry::grid(std::array<std::size_t, 3> global, std::array<std::size_t, 3> local)
{
  return LaunchGeometry{3, global, local};
}

std::string
LaunchGeometry::local_text() const
{
  if (driver_chooses_local()) {
    return "auto";
  }
  std::string text = std::to_string(local[0]);
  for (unsigned d = 1; d < dimensions; ++d) {
    text += 'x' + std::to_string(local[d]);
  }
  return text;
}

KernelArgs&
KernelArgs::buffer(const DeviceBuffer& buffer)
{
  Arg arg;
  // A cl_mem handle or a Level Zero device pointer: either way the kernel
  // argument is the pointer-sized handle itself.
  arg.buffer = buffer.get();
  arg.size = sizeof arg.buffer;
  arg.bytes.resize(sizeof arg.buffer);
  std::memcpy(arg.bytes.data(), &arg.buffer, sizeof arg.buffer);
  m_args.push_back(std::move(arg));
  return *this;
}

KernelArgs&
KernelArgs::local(std::size_t bytes)
{
  Arg arg;
  arg.size = bytes;
  m_args.push_back(std::move(arg));
  return *this;
}

} // namespace prewarm::engine
