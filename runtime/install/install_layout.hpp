// SPDX-License-Identifier: Apache-2.0
// The install root, as prewarm-runtime lays it out:
//
//   ROOT/.prewarm/versions/<id>/ one installed bundle selection, complete and
//                                never changed by an installer once published
//                                (but for .environment and .start below):
//     <kind>/...                   its cache directories ("pocl", "custom/NAME")
//     .manifest                    the verified manifest bytes (status, env:
//                                  requirements, custom caches, the signed file
//                                  list private copies are checked against)
//     .files                       every installed file per kind
//                                  (audit/file_inventory.hpp), for audits
//     .environment                 the variables the trust policy allowed
//                                  beyond the allow list at install, one name a
//                                  line (bundle/runtime_variable.hpp)
//     .start                       the start record (install_records.hpp): what
//                                  a repeated install and `exec` read instead of
//                                  the manifest; written after the switch, and
//                                  again when an install finds it missing or of
//                                  another policy (removed first when
//                                  .environment changes)
//   ROOT/.prewarm/installed      marker (install_records.hpp): names the
//                                current version. Renaming a new marker over
//                                it is THE switch: a reader that reads the
//                                marker once and then only opens that version
//                                sees one bundle, whatever runs beside it
//   ROOT/.prewarm/lock           flock(2) target; serializes installers
//   ROOT/.prewarm/state          high-water serial per channel (rollback guard)
//   ROOT/.prewarm/staging.XXXXXX private extraction dirs; stale ones (a crashed
//                                run) are removed under the lock
//   ROOT/<kind>                  a symbolic link to .prewarm/versions/<id>/<kind>,
//                                for people and scripts that look inside the
//                                root; re-pointed one by one after the switch,
//                                so never what an application is given
//                                (`env`/`exec` export the version's own paths)
//
// Versions are removed by the next installer (under the lock) once no
// process holds them: `exec` holds a shared flock(2) on the version
// directory for the application's life (the descriptor is inherited by the
// application), a remover takes it exclusively without waiting, renames the
// version away while it holds it, and only then deletes it. A reader that
// locked a version checks afterwards that it is still at its name
// (installed_version.hpp).
//
// Legacy: before versions, ROOT/<kind> were the live directories, a marker
// without a version line described them, ROOT/.prewarm/manifest and files
// held the records, and ROOT/.prewarm/committing marked a kind-by-kind swap
// in progress. Readers still understand such a root; the next install
// replaces it with a version.
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
inline constexpr std::string_view k_versions_dir = "versions";
inline constexpr std::string_view k_version_manifest_file = ".manifest";
inline constexpr std::string_view k_version_files_file = ".files";
inline constexpr std::string_view k_version_environment_file = ".environment";
inline constexpr std::string_view k_version_start_file = ".start";

inline std::filesystem::path
meta_dir(const std::filesystem::path& root)
{
  return root / k_meta_dir;
}

inline std::filesystem::path
versions_dir(const std::filesystem::path& root)
{
  return meta_dir(root) / k_versions_dir;
}

// [A-Za-z0-9_-]{1,64}: a name the installer made (no dot, no slash).
inline bool
is_version_id(std::string_view id)
{
  if (id.empty() || id.size() > 64) {
    return false;
  }
  for (const char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
      return false;
    }
  }
  return true;
}

} // namespace prewarm::install
