// SPDX-License-Identifier: Apache-2.0
// PoCL 3.1 creates its kernel cache ($POCL_CACHE_DIR, else
// $XDG_CACHE_HOME/pocl, else $HOME/.cache/pocl) while it initialises its
// device; when it cannot (user `nobody`, HOME=/nonexistent) the platform
// enumerates with no device at all, and the host "has no devices". For the
// device enumeration child only: when neither POCL_CACHE_DIR nor a writable
// HOME is there, HOME, XDG_CACHE_HOME and POCL_CACHE_DIR point at a private
// temporary directory for the life of this object (removed after). The
// application's own environment is not touched.
#pragma once

#include <filesystem>

namespace prewarm::host {

// True when `home` names a directory this process may write into.
bool home_is_usable(const char* home);

class PrivateHomeIfUnusable
{
public:
  PrivateHomeIfUnusable();
  ~PrivateHomeIfUnusable();
  PrivateHomeIfUnusable(const PrivateHomeIfUnusable&) = delete;
  PrivateHomeIfUnusable& operator=(const PrivateHomeIfUnusable&) = delete;

  // Empty when HOME (or POCL_CACHE_DIR) was usable and nothing was changed.
  const std::filesystem::path& directory() const { return m_directory; }

private:
  std::filesystem::path m_directory;
};

} // namespace prewarm::host
