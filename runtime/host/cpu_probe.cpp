// SPDX-License-Identifier: Apache-2.0
#include "host/cpu_probe.hpp"

#include "base/files.hpp"

#include <fmt/format.h>

#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <sstream>

namespace prewarm::host {

std::set<std::string, std::less<>>
cpuinfo_flags(std::string_view cpuinfo)
{
  std::set<std::string, std::less<>> flags;
  std::istringstream lines{std::string(cpuinfo)};
  std::string line;
  while (std::getline(lines, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      continue;
    }
    auto key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key != "flags") {
      continue;
    }
    std::istringstream words(line.substr(colon + 1));
    std::string word;
    while (words >> word) {
      flags.insert(word);
    }
    break; // the first processor's
  }
  return flags;
}

int
x86_64_isa_level(const std::set<std::string, std::less<>>& flags)
{
  if (flags.empty()) {
    return 0;
  }
  // The psABI levels (x86-64 psABI 1.0, "Micro-architecture levels"), in
  // the names Linux gives the CPUID bits.
  constexpr std::array<std::string_view, 6> level2 = {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"};
  constexpr std::array<std::string_view, 9> level3 = {"avx", "avx2", "bmi1",  "bmi2", "f16c",
                                                      "fma", "abm",  "movbe", "xsave"};
  constexpr std::array<std::string_view, 5> level4 = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"};
  const auto has_all = [&](const auto& names) {
    return std::ranges::all_of(names, [&](std::string_view name) { return flags.contains(name); });
  };
  if (!has_all(level2)) {
    return 1;
  }
  if (!has_all(level3)) {
    return 2;
  }
  return has_all(level4) ? 4 : 3;
}

DeviceProperties
probe_cpu(const std::filesystem::path& proc_root)
{
  DeviceProperties cpu;
  struct utsname names
  {};
  if (::uname(&names) == 0) {
    cpu.emplace(std::string(prop::cpu_arch), names.machine);
    cpu.emplace(std::string(prop::os_kernel_release), names.release);
  }
  if (cpu.contains(prop::cpu_arch) && cpu.at(std::string(prop::cpu_arch)) == "x86_64") {
    if (const auto text = read_file((proc_root / "cpuinfo").string(), 4 << 20)) {
      if (const int level = x86_64_isa_level(cpuinfo_flags(*text)); level > 0) {
        cpu.emplace(std::string(prop::cpu_isa_level), std::to_string(level));
      }
    }
  }
  return cpu;
}

std::string
describe_cpu(const DeviceProperties& cpu)
{
  const auto arch = cpu.find(prop::cpu_arch);
  const auto level = cpu.find(prop::cpu_isa_level);
  return fmt::format("CPU {}{}", arch == cpu.end() ? std::string("(unknown architecture)") : arch->second,
                     level == cpu.end() ? std::string() : fmt::format(" (x86-64 level {})", level->second));
}

} // namespace prewarm::host
