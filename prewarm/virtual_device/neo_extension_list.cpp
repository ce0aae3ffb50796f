// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/neo_extension_list.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>

namespace prewarm::virtual_device::neo {

namespace {

constexpr std::string_view k_list_start = " -cl-ext=-all";
constexpr std::string_view k_fp64_emulation = "-cl-fp64-gen-emu";

} // namespace

ClStd
opencl_c_version(std::string_view options)
{
  // As NEO reads it: a stream from just after the first "-cl-std=CL"
  // (a failed read leaves 0, as "C++" does).
  constexpr std::string_view option = "-cl-std=CL";
  const auto at = options.find(option);
  if (at == std::string_view::npos) {
    return {};
  }
  std::istringstream stream{std::string(options.substr(at + option.size()))};
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  char dot = 0;
  stream >> major >> dot >> minor;
  return {major, minor};
}

std::string
compiler_extensions(const std::vector<std::string>& extensions, const std::vector<std::string>& features,
                    std::string_view options, std::string_view internal)
{
  const auto version = opencl_c_version(options);
  std::string list = std::string(k_list_start) + ",";
  for (const auto& name : extensions) {
    list += "+" + name + ",";
  }
  if (version.major >= 3) {
    for (const auto& name : features) {
      list += "+" + name + ",";
    }
  }
  list.back() = ' ';
  if (version.major == 2) {
    list.pop_back();
    list += ",+cl_khr_3d_image_writes ";
  }
  if (internal.find(k_fp64_emulation) != std::string_view::npos) {
    list.pop_back();
    list += ",+__opencl_c_fp64,+cl_khr_fp64 ";
  }
  if (version.major == 1 && version.minor < 2) {
    constexpr std::string_view msaa = "+cl_khr_gl_msaa_sharing";
    if (const auto at = list.find(msaa); at != std::string::npos) {
      list.erase(at, msaa.size());
    }
  }
  return list;
}

std::optional<ExtensionListPlace>
find_extension_list(std::string_view internal_options)
{
  const auto start = internal_options.find(k_list_start);
  if (start == std::string_view::npos) {
    return std::nullopt;
  }
  const auto space = internal_options.find(' ', start + 1);
  const auto end = space == std::string_view::npos ? internal_options.size() : space + 1;
  return ExtensionListPlace{std::string(internal_options.substr(0, start)),
                            std::string(internal_options.substr(start, end - start)),
                            std::string(internal_options.substr(end))};
}

std::vector<std::string>
recorded_features(const ExtensionListPlace& place, std::string_view options)
{
  std::vector<std::string> features;
  if (opencl_c_version(options).major < 3) {
    return features;
  }
  std::string_view rest = place.list;
  rest.remove_prefix(std::min(rest.size(), k_list_start.size() + 1));
  while (!rest.empty()) {
    const auto comma = std::min(rest.find_first_of(", "), rest.size());
    const auto name = rest.substr(0, comma);
    if (name.starts_with("+__opencl_c_")) {
      features.emplace_back(name.substr(1));
    }
    rest.remove_prefix(std::min(comma + 1, rest.size()));
  }
  if (place.before.find(k_fp64_emulation) != std::string::npos) {
    // step 2 appended "+__opencl_c_fp64" after the device's features
    const auto appended = std::ranges::find(features.rbegin(), features.rend(), "__opencl_c_fp64");
    if (appended != features.rend()) {
      features.erase(std::next(appended).base());
    }
  }
  return features;
}

std::vector<std::string>
split_names(std::string_view text)
{
  std::vector<std::string> names;
  std::istringstream stream{std::string(text)};
  for (std::string name; stream >> name;) {
    names.push_back(std::move(name));
  }
  return names;
}

} // namespace prewarm::virtual_device::neo
