// SPDX-License-Identifier: Apache-2.0
// How an installer publishes a version and retires the old ones
// (install_layout.hpp). All of it runs under the installer lock.
//
//   staging.X/ (complete: caches, .manifest, .files, synced)
//     -> chmod 0755 -> renameat2(NOREPLACE) to versions/<id> -> fsync versions/
//     -> [the installer writes the state, then the marker naming <id>: the switch]
//     -> ROOT/<kind> links re-pointed (symlink + rename: each link replaced whole)
//     -> every other version that no process holds: removed (remove_unless_held)
// A kill before the marker's rename leaves the old marker, so the old version
// is current and the new directory is an unreferenced version, removed by the
// next install; after it, the new one is current and the old one is removed
// by the next install. No reader ever sees kinds of two versions.
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace prewarm::install {

// A new version id: the manifest digest's first 16 hex digits, '-', and the
// staging directory's random suffix (unique in the root).
std::string new_version_id(std::string_view manifest_sha256, const std::filesystem::path& staging);

// Moves the complete staging directory to ROOT/.prewarm/versions/<id>, mode
// 0755 (readable by the application's user; writes stay the owner's).
Status publish_version(const std::filesystem::path& root, const std::filesystem::path& staging, int staging_fd,
                       const std::string& id);

// ROOT/<kind> -> .prewarm/versions/<id>/<kind> for each kind (a link that is
// right already is not touched); a link of a
// kind no longer installed that points into .prewarm/versions is removed. A
// legacy kind directory there is moved out of the way (removed with the
// stale staging); anything else is left with a warning. Best effort: these
// links are for people, never what `env`/`exec` give an application.
void point_kind_links(const std::filesystem::path& root, const std::string& id, const std::vector<std::string>& kinds,
                      const std::vector<std::string>& previous_kinds);

// Whether every ROOT/<kind> link already points at version `id` (readlink
// per kind; the no-probe fast path of a repeated install checks it).
bool kind_links_point_at(const std::filesystem::path& root, const std::string& id,
                         const std::vector<std::string>& kinds);

// VERSION/.environment: the names the trust policy allowed beyond the allow
// list (install_layout.hpp). A policy is the image's, so a new policy over the
// same bundle takes effect at the next install: environment_recorded() says
// whether the record is this policy's, record_environment() replaces it
// atomically (env/exec read the old record or the new one).
std::string environment_record(const std::set<std::string, std::less<>>& allowed);
bool environment_recorded(const std::filesystem::path& version_dir, const std::set<std::string, std::less<>>& allowed);
Status record_environment(const std::filesystem::path& version_dir,
                          const std::set<std::string, std::less<>>& allowed);

// Removes every version but `keep` that no process holds; returns how many
// were kept because they are held.
std::size_t remove_old_versions(const std::filesystem::path& root, const std::string& keep);

} // namespace prewarm::install
