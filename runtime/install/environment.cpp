// SPDX-License-Identifier: Apache-2.0
#include "install/environment.hpp"

#include "base/encoding.hpp"
#include "install/install_layout.hpp"
#include "install/install_records.hpp"
#include "install/opencl_layer_environment.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::install {

Result<std::vector<bundle::EnvSetting>>
environment(const std::filesystem::path& root_in)
{
  std::error_code ec;
  const auto root = std::filesystem::absolute(root_in, ec).lexically_normal();
  PW_ASSIGN(const auto marker, read_marker(root));
  if (!marker) {
    return fail(Errc::failed, fmt::format("nothing is installed under {} (no {}/{})", in_quotes(root.string()),
                                          k_meta_dir, k_marker_file),
                "E_NOT_INSTALLED");
  }
  std::vector<bundle::EnvSetting> settings;
  for (const auto& installed : marker->kinds) {
    PW_ASSIGN_CTX(const auto kind, fmt::format("install marker under {}", root.string()),
                  bundle::parse_cache_kind(installed.kind));
    if (kind == bundle::CacheKind::neo) {
      std::filesystem::create_directories(root / installed.kind, ec); // see the header
    }
    auto vars = bundle::cache_environment(kind, root / installed.kind, installed.bytes);
    settings.insert(settings.end(), vars.begin(), vars.end());
    if (kind == bundle::CacheKind::programs) {
      auto layer = opencl_layer_environment(root / installed.kind);
      settings.insert(settings.end(), layer.begin(), layer.end());
    }
  }
  settings.push_back({std::string(k_root_variable), root.string()});
  std::sort(settings.begin(), settings.end());
  return settings;
}

std::string
format_shell_exports(const std::vector<bundle::EnvSetting>& settings)
{
  std::string out;
  for (const auto& s : settings) {
    std::string quoted;
    for (const char c : s.value) {
      if (c == '\'') {
        quoted += "'\\''";
      } else {
        quoted += c;
      }
    }
    out += fmt::format("export {}='{}'\n", s.name, quoted);
  }
  return out;
}

} // namespace prewarm::install
