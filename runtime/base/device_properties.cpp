// SPDX-License-Identifier: Apache-2.0
#include "base/device_properties.hpp"

#include "base/digest.hpp"

#include <fmt/format.h>

namespace prewarm {

std::string
opencl_extensions_value(std::string_view extensions)
{
  std::string words;
  std::size_t count = 0;
  while (!extensions.empty()) {
    const auto start = extensions.find_first_not_of(' ');
    if (start == std::string_view::npos) {
      break;
    }
    extensions.remove_prefix(start);
    const auto end = extensions.find(' ');
    words += (count++ == 0 ? "" : " ");
    words += extensions.substr(0, end);
    extensions = end == std::string_view::npos ? std::string_view{} : extensions.substr(end);
  }
  return fmt::format("{}:{}", count, sha256_hex(words).substr(0, 16));
}

} // namespace prewarm
