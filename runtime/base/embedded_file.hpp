// SPDX-License-Identifier: Apache-2.0
// A text file compiled into a binary (kernels, default manifest, target
// registry); see cmake/PrewarmEmbed.cmake.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace prewarm {

struct EmbeddedFile
{
  std::string_view name; // file name without directories, e.g. "gemm.cl"
  std::string_view bytes;
};

inline std::optional<std::string_view>
find_embedded(std::span<const EmbeddedFile> files, std::string_view name)
{
  for (const auto& f : files) {
    if (f.name == name) {
      return f.bytes;
    }
  }
  return std::nullopt;
}

} // namespace prewarm
