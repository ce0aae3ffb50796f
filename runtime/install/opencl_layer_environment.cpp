// SPDX-License-Identifier: Apache-2.0
#include "install/opencl_layer_environment.hpp"

#include "base/files.hpp"
#include "base/log.hpp"

#include <cctype>
#include <cstdlib>
#include <string_view>
#include <system_error>

namespace prewarm::install {
namespace {

constexpr std::string_view k_layer_library = "libprewarm_opencl_layer.so";
constexpr std::string_view k_layer_field = "\nlayer-format ";

bool
is_record_directory(const std::filesystem::path& dir)
{
  const auto name = dir.filename().string();
  return name.size() == 2 && std::isxdigit(static_cast<unsigned char>(name[0])) != 0 &&
         std::isxdigit(static_cast<unsigned char>(name[1])) != 0;
}

} // namespace

bool
holds_layer_records(const std::filesystem::path& programs_dir)
{
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator(programs_dir / "aot", ec)) {
    for (const auto& file : std::filesystem::directory_iterator(dir.path(), ec)) {
      if (file.path().filename().string().starts_with("target.")) {
        return true;
      }
    }
  }
  ec.clear();
  for (const auto& dir : std::filesystem::directory_iterator(programs_dir, ec)) {
    if (!dir.is_directory(ec) || !is_record_directory(dir.path())) {
      continue;
    }
    for (const auto& file : std::filesystem::directory_iterator(dir.path(), ec)) {
      if (file.path().extension() != ".meta") {
        continue;
      }
      if (auto meta = read_file(file.path().string(), 1 << 20); meta && meta->find(k_layer_field) != std::string::npos) {
        return true;
      }
    }
  }
  return false;
}

std::optional<std::filesystem::path>
find_opencl_layer()
{
  std::error_code ec;
  if (const char* given = std::getenv("PREWARM_OPENCL_LAYER"); given != nullptr && *given != '\0') {
    return std::filesystem::exists(given, ec) ? std::optional<std::filesystem::path>(given) : std::nullopt;
  }
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return std::nullopt;
  }
  const auto dir = exe.parent_path();
  // Installed (bin/ + lib/prewarm/, or libexec/prewarm/ for the runtime's
  // full command line behind its front), then the build tree (runtime/cli/
  // or prewarm/cli/ beside runtime/layer/).
  for (const auto& candidate : {dir / ".." / "lib" / "prewarm" / k_layer_library,
                                dir / ".." / ".." / "lib" / "prewarm" / k_layer_library,
                                dir / ".." / "layer" / k_layer_library,
                                dir / ".." / ".." / "runtime" / "layer" / k_layer_library}) {
    if (std::filesystem::exists(candidate, ec)) {
      return std::filesystem::weakly_canonical(candidate, ec);
    }
  }
  return std::nullopt;
}

std::vector<bundle::EnvSetting>
opencl_layer_environment(const std::filesystem::path& programs_dir)
{
  if (!holds_layer_records(programs_dir)) {
    return {};
  }
  const auto layer = find_opencl_layer();
  if (!layer) {
    log::warn("the installed programs hold OpenCL layer records, but {} is not installed beside prewarm-runtime "
              "(../lib/prewarm/): applications will compile them (set PREWARM_OPENCL_LAYER to its path)",
              k_layer_library);
    return {};
  }
  std::string layers = layer->string();
  if (const char* existing = std::getenv("OPENCL_LAYERS"); existing != nullptr && *existing != '\0' && layers != existing) {
    layers += ":";
    layers += existing;
  }
  return {{"OPENCL_LAYERS", layers}, {"PREWARM_LAYER", "serve"}};
}

} // namespace prewarm::install
