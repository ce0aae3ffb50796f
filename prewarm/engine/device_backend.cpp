// SPDX-License-Identifier: Apache-2.0
#include "engine/device_backend.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

namespace prewarm::engine {

std::string_view
to_string(Backend backend)
{
  return backend == Backend::level_zero ? "level-zero" : "opencl";
}

Result<Backend>
parse_backend(std::string_view text)
{
  if (text == "opencl") {
    return Backend::opencl;
  }
  if (text == "level-zero") {
    return Backend::level_zero;
  }
  return fail(Errc::usage, fmt::format("unknown backend {} (expected opencl or level-zero)", in_quotes(text)));
}

std::string
ProgramText::label() const
{
  return fmt::format("{} [{}]", source_name, options);
}

} // namespace prewarm::engine
