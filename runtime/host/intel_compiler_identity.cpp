// SPDX-License-Identifier: Apache-2.0
#include "host/intel_compiler_identity.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>
#include <sys/stat.h>

namespace prewarm::host {

std::optional<std::string>
igc_identity_of(const std::filesystem::path& library)
{
  struct stat info{};
  if (::stat(library.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return std::nullopt;
  }
  return fmt::format("{}:{}", static_cast<long long>(info.st_size), static_cast<long long>(info.st_mtime));
}

std::optional<std::filesystem::path>
find_igc_library(std::string_view ld_library_path, const std::filesystem::path& root)
{
  std::vector<std::filesystem::path> directories;
  while (!ld_library_path.empty()) {
    const auto colon = ld_library_path.find(':');
    const auto item = ld_library_path.substr(0, colon);
    if (!item.empty()) {
      directories.emplace_back(std::string(item));
    }
    ld_library_path = colon == std::string_view::npos ? std::string_view{} : ld_library_path.substr(colon + 1);
  }
  // Debian/Ubuntu multiarch first (intel-opencl-icd's IGC), then the
  // directories of other distributions and of Intel's own packages.
  for (const char* d : {"usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu", "usr/lib64", "usr/local/lib",
                        "usr/lib"}) {
    directories.push_back(root / d);
  }
  for (const auto& directory : directories) {
    auto candidate = directory / k_igc_library;
    struct stat info{};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      return candidate;
    }
  }
  return std::nullopt;
}

std::optional<std::string>
host_igc_identity()
{
  const char* path = std::getenv("LD_LIBRARY_PATH");
  const auto library = find_igc_library(path != nullptr ? path : "");
  return library ? igc_identity_of(*library) : std::nullopt;
}

} // namespace prewarm::host
