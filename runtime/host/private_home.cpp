// SPDX-License-Identifier: Apache-2.0
#include "host/private_home.hpp"

#include "base/log.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace prewarm::host {

bool
home_is_usable(const char* home)
{
  struct stat st{};
  return home != nullptr && *home != '\0' && ::stat(home, &st) == 0 && S_ISDIR(st.st_mode) &&
         ::access(home, W_OK | X_OK) == 0;
}

PrivateHomeIfUnusable::PrivateHomeIfUnusable()
{
  const char* pocl_cache = std::getenv("POCL_CACHE_DIR");
  if ((pocl_cache != nullptr && *pocl_cache != '\0') || home_is_usable(std::getenv("HOME"))) {
    return;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/prewarm-probe-home.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    log::verbose("no usable HOME and no private one ({}): OpenCL drivers may report no devices", pattern);
    return;
  }
  m_directory = pattern;
  const auto cache = m_directory / ".cache";
  ::mkdir(cache.c_str(), 0700);
  ::setenv("HOME", m_directory.c_str(), 1);
  ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  ::setenv("POCL_CACHE_DIR", (cache / "pocl").c_str(), 1);
  log::verbose("HOME is not usable: the device probe uses the private home {}", m_directory.string());
}

PrivateHomeIfUnusable::~PrivateHomeIfUnusable()
{
  if (!m_directory.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(m_directory, ec);
  }
}

} // namespace prewarm::host
