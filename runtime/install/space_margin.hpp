// SPDX-License-Identifier: Apache-2.0
// Free space an install needs beyond the caches it writes: the caches' bytes
// plus a block per entry (directories, rounding), plus a margin that keeps
// the volume from being filled to the last byte (the version being replaced
// is removed only after the switch, and the application writes new entries
// beside the installed ones). The margin is proportional to what is
// installed, with a small floor: 10% of the caches, at least 1 MiB. Set with
// `install --space-margin` as a size ("0", "512K", "8M") or a percentage
// ("25%", floor kept) for small volumes: edge devices, emptyDir volumes with a
// sizeLimit.
#pragma once

#include "base/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace prewarm::install {

struct SpaceMargin
{
  static constexpr unsigned k_default_percent = 10;
  static constexpr std::uint64_t k_floor_bytes = std::uint64_t{1} << 20;

  unsigned percent = k_default_percent;
  std::optional<std::uint64_t> fixed_bytes; // a size given: exactly that

  static SpaceMargin bytes(std::uint64_t n) { return SpaceMargin{0, n}; }
  // The margin for caches of `cache_bytes`.
  std::uint64_t of(std::uint64_t cache_bytes) const;
  // "10% of the caches, at least 1 MiB" / "8388608 bytes (--space-margin)".
  std::string describe() const;
};

// "0", "4096", "512K", "8M", "1G" (powers of 1024) or "N%" (0-1000);
// Errc::usage naming the text otherwise.
Result<SpaceMargin> parse_space_margin(std::string_view text);

// E_NOSPC unless the filesystem of `root_fd` has `cache_bytes` plus the
// margin free; the message says what is free, what is needed, and what would
// fit (the largest margin that would, or how much the caches alone lack).
Status check_free_space(int root_fd, const std::filesystem::path& root, std::uint64_t cache_bytes,
                        const SpaceMargin& margin);

} // namespace prewarm::install
