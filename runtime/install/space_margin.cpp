// SPDX-License-Identifier: Apache-2.0
#include "install/space_margin.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

namespace prewarm::install {

std::uint64_t
SpaceMargin::of(std::uint64_t cache_bytes) const
{
  if (fixed_bytes) {
    return *fixed_bytes;
  }
  return std::max(k_floor_bytes, cache_bytes / 100 * percent + cache_bytes % 100 * percent / 100);
}

std::string
SpaceMargin::describe() const
{
  if (fixed_bytes) {
    return fmt::format("{} bytes (--space-margin)", *fixed_bytes);
  }
  return fmt::format("{}% of the caches, at least {} bytes", percent, k_floor_bytes);
}

Result<SpaceMargin>
parse_space_margin(std::string_view text)
{
  const auto bad = [&] {
    return fail(Errc::usage, fmt::format("--space-margin {}: expected a size (0, 4096, 512K, 8M, 1G) or a "
                                         "percentage of the caches (25%)",
                                         in_quotes(text)));
  };
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc{} || end == text.data()) {
    return bad();
  }
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (suffix == "%") {
    if (number > 1000) {
      return bad();
    }
    return SpaceMargin{static_cast<unsigned>(number), std::nullopt};
  }
  unsigned shift = 0;
  if (suffix == "K" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M") {
    shift = 20;
  } else if (suffix == "G") {
    shift = 30;
  } else if (!suffix.empty()) {
    return bad();
  }
  if (shift != 0 && number > (UINT64_MAX >> shift)) {
    return bad();
  }
  return SpaceMargin::bytes(number << shift);
}

Status
check_free_space(int root_fd, const std::filesystem::path& root, std::uint64_t cache_bytes, const SpaceMargin& margin)
{
  struct statvfs vfs
  {};
  if (::fstatvfs(root_fd, &vfs) != 0) {
    return fail(Errc::failed,
                fmt::format("cannot query free space of {}: {}", in_quotes(root.string()), errno_message(errno)));
  }
  const std::uint64_t available = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  const std::uint64_t extra = margin.of(cache_bytes);
  const std::uint64_t needed = cache_bytes > UINT64_MAX - extra ? UINT64_MAX : cache_bytes + extra;
  if (available >= needed) {
    return {};
  }
  const std::string what_fits =
    available >= cache_bytes
      ? fmt::format("the caches fit with --space-margin {} or less", available - cache_bytes)
      : fmt::format("the caches alone need {} bytes, {} more than free: free space, or build a bundle with fewer "
                    "caches for this host",
                    cache_bytes, cache_bytes - available);
  return fail(Errc::failed,
              fmt::format("not enough space under {}: {} bytes free, {} needed (caches {} + margin {}: {}); {}",
                          root.string(), available, needed, cache_bytes, extra, margin.describe(), what_fits),
              "E_NOSPC");
}

} // namespace prewarm::install
