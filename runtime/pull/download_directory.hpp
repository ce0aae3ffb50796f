// SPDX-License-Identifier: Apache-2.0
// Where a registry pull keeps what it fetched until the install takes it:
//
//   ROOT/.prewarm/downloads/           0700, this user's
//     <hex of the OCI manifest>/       0700: a bundle directory the installer reads
//       manifest, manifest.sig         written O_EXCL after the old ones are removed
//       slices/<id>.tar.zst[.partial]  registry/registry_fetch.hpp
//
// Handled like the install root, through directory fds and never by a path
// that a link could redirect: each level is made with mkdirat and opened
// O_DIRECTORY|O_NOFOLLOW, must belong to this user, and is fchmod-ed 0700 on
// its fd. A level that is a symlink, not a directory, or another user's is
// not ours: it is removed (a symlink itself, never its target) and made
// again, once. ROOT and ROOT/.prewarm are the installer's: a symlink there is
// refused (E_TARGET_UNSAFE), as the installer refuses it.
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace prewarm::pull {

struct DownloadDirectory
{
  std::filesystem::path path; // ROOT/.prewarm/downloads/<hex>: for the installer and messages
  UniqueFd downloads;         // ROOT/.prewarm/downloads
  UniqueFd bundle;            // .../<hex>
  UniqueFd slices;            // .../<hex>/slices
  std::string name;           // <hex>
};

// Opens (creating what is missing) the download directory of `hex` under
// `downloads`, which is ROOT/.prewarm/downloads.
Result<DownloadDirectory> open_download_directory(const std::filesystem::path& downloads, const std::string& hex);

// `bytes` as `name` in `dirfd`: whatever is there is removed, the file is
// created O_EXCL|O_NOFOLLOW, 0600.
Status write_download_file(int dirfd, const std::string& name, std::string_view bytes, std::string_view where);

// Removes the bundle's download directory through its parent's fd.
Status remove_download_directory(const DownloadDirectory& directory);

// The same by path (ROOT/.prewarm/downloads/<hex>): for a caller that holds
// no fds any more; nothing outside `downloads` is followed.
Status remove_download_directory(const std::filesystem::path& downloads, const std::string& hex);

} // namespace prewarm::pull
