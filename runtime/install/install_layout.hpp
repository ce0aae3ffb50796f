// SPDX-License-Identifier: Apache-2.0
// The install root, as prewarm-runtime lays it out:
//
//   ROOT/<kind>/...              live cache directories ("pocl", "neo", ...),
//                                what the environment variables point at
//   ROOT/.prewarm/lock           flock(2) target; serializes installers
//   ROOT/.prewarm/installed      marker of the installed bundle (install_records.hpp)
//   ROOT/.prewarm/manifest       the verified manifest bytes of that bundle
//                                (for `status`: requirements per slice)
//   ROOT/.prewarm/files          every installed file per kind
//                                (audit/file_inventory.hpp), for audits
//   ROOT/.prewarm/state          high-water serial per channel (rollback guard)
//   ROOT/.prewarm/committing     present only while caches are being swapped
//                                in; a crash leaves it, and the next run then
//                                distrusts the marker and installs again
//   ROOT/.prewarm/staging.XXXXXX private extraction dirs; stale ones (a crashed
//                                run) are removed under the lock
#pragma once

#include <filesystem>
#include <string_view>

namespace prewarm::install {

inline constexpr std::string_view k_meta_dir = ".prewarm";
inline constexpr std::string_view k_lock_file = "lock";
inline constexpr std::string_view k_marker_file = "installed";
inline constexpr std::string_view k_manifest_copy_file = "manifest";
inline constexpr std::string_view k_state_file = "state";
inline constexpr std::string_view k_file_inventory_file = "files";
inline constexpr std::string_view k_committing_file = "committing";
inline constexpr std::string_view k_staging_prefix = "staging.";

inline std::filesystem::path
meta_dir(const std::filesystem::path& root)
{
  return root / k_meta_dir;
}

} // namespace prewarm::install
