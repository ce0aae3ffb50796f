// SPDX-License-Identifier: Apache-2.0
#include "host/nvidia_probe.hpp"

#include "base/encoding.hpp"

#include <algorithm>
#include <cctype>

namespace prewarm::host {

namespace {

bool
is_version_token(std::string_view token)
{
  // digits ('.' digits)+ : "580.159.04", "550.54"
  if (token.empty() || !std::isdigit(static_cast<unsigned char>(token.front())) ||
      !std::isdigit(static_cast<unsigned char>(token.back()))) {
    return false;
  }
  bool has_dot = false;
  for (std::size_t i = 0; i < token.size(); ++i) {
    const char c = token[i];
    if (c == '.') {
      if (token[i - 1] == '.') {
        return false;
      }
      has_dot = true;
    } else if (!std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return has_dot;
}

std::vector<std::string_view>
split(std::string_view text, char separator)
{
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

std::string
lowercase(std::string_view text)
{
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

} // namespace

std::optional<std::string>
parse_nvidia_driver_version(std::string_view text)
{
  for (const auto line : split(text, '\n')) {
    const auto module_at = line.find("Kernel Module");
    if (line.find("NVRM version:") == std::string_view::npos || module_at == std::string_view::npos) {
      continue;
    }
    // The version is the first dotted-number token after "Kernel Module".
    for (const auto token : split(line.substr(module_at), ' ')) {
      if (is_version_token(token)) {
        return std::string(token);
      }
    }
  }
  return std::nullopt;
}

std::vector<NvidiaGpu>
parse_nvidia_smi_query(std::string_view csv)
{
  std::vector<NvidiaGpu> gpus;
  for (const auto raw_line : split(csv, '\n')) {
    const auto fields = split(trim(raw_line), ',');
    if (fields.size() != 3) {
      continue;
    }
    const auto bus = lowercase(trim(fields[0]));
    const auto cap = trim(fields[1]);
    const auto id = lowercase(trim(fields[2]));
    // bus "00000000:18:00.0" -> "0000:18:00.0" (sysfs uses a 4-digit domain).
    if (bus.size() < 12 || !is_version_token(cap) || cap.find('.') != cap.rfind('.') ||
        id.size() != 10 || !id.starts_with("0x")) {
      continue;
    }
    const auto dot = cap.find('.');
    NvidiaGpu gpu;
    gpu.pci_address = bus.substr(bus.size() - 12);
    gpu.sm = std::string(cap.substr(0, dot)) + std::string(cap.substr(dot + 1));
    gpu.pci_id = "0x" + id.substr(2, 4); // "0x233010de": device id, then vendor id
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::vector<std::string>
nvidia_smi_query_argv(std::string_view nvidia_smi)
{
  return {std::string(nvidia_smi), "--query-gpu=pci.bus_id,compute_cap,pci.device_id",
          "--format=csv,noheader"};
}

} // namespace prewarm::host
