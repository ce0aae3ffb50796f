// SPDX-License-Identifier: Apache-2.0
// The CPU record (host/cpu_probe.hpp), checked against independent sources:
// uname(1) for the architecture and kernel release, and glibc's dynamic
// loader, which says which x86-64 levels this CPU supports (`ld.so --help`:
// "x86-64-v3 (supported, searched)"), for the level read from /proc/cpuinfo.
#include "host/cpu_probe.hpp"
#include "host/probe_host.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

namespace prewarm::host {
namespace {

std::string
output_of(const std::string& command)
{
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) {
    return {};
  }
  std::string out;
  std::array<char, 256> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) {
    out += buffer.data();
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) {
    out.pop_back();
  }
  return out;
}

TEST(CpuProbe, ArchitectureAndKernelReleaseAreUnames)
{
  const auto cpu = probe_cpu();
  EXPECT_EQ(cpu.at(std::string(prop::cpu_arch)), output_of("uname -m"));
  EXPECT_EQ(cpu.at(std::string(prop::os_kernel_release)), output_of("uname -r"));
}

TEST(CpuProbe, IsaLevelIsTheHighestTheDynamicLoaderSupports)
{
  const auto cpu = probe_cpu();
  if (cpu.at(std::string(prop::cpu_arch)) != "x86_64") {
    EXPECT_FALSE(cpu.contains(prop::cpu_isa_level)) << "x86-64 only";
    return;
  }
  const auto help = output_of("/lib64/ld-linux-x86-64.so.2 --help 2>/dev/null");
  int supported = 1;
  for (int level = 2; level <= 4; ++level) {
    if (help.find("x86-64-v" + std::to_string(level) + " (supported") != std::string::npos) {
      supported = level;
    }
  }
  if (help.find("x86-64-v2") == std::string::npos) {
    GTEST_SKIP() << "this glibc does not list the x86-64 levels";
  }
  EXPECT_EQ(cpu.at(std::string(prop::cpu_isa_level)), std::to_string(supported));
}

TEST(CpuProbe, LevelsFromFlags)
{
  EXPECT_EQ(x86_64_isa_level({}), 0);
  EXPECT_EQ(x86_64_isa_level({"fpu", "sse2"}), 1);
  const std::string v2 = "flags : cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3\nflags : avx\n";
  EXPECT_EQ(x86_64_isa_level(cpuinfo_flags(v2)), 2) << "the first processor's flags only";
  auto v3 =
    cpuinfo_flags("flags\t\t: cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave\n");
  EXPECT_EQ(x86_64_isa_level(v3), 3);
  v3.insert({"avx512f", "avx512bw", "avx512cd", "avx512dq"});
  EXPECT_EQ(x86_64_isa_level(v3), 3) << "avx512vl missing";
  v3.insert("avx512vl");
  EXPECT_EQ(x86_64_isa_level(v3), 4);
}

// A host without any device record still has its CPU, last and separate.
TEST(CpuProbe, TheCpuIsARecordOfItsOwn)
{
  HostFindings findings;
  findings.cpu = DeviceProperties{{"cpu.arch", "x86_64"}, {"cpu.isa-level", "3"}};
  findings.frameworks = {{"framework.jax", "0.10.2"}};
  const auto devices = merge_host_findings(findings);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].description, "CPU x86_64 (x86-64 level 3)");
  EXPECT_EQ(devices[0].properties.at("framework.jax"), "0.10.2");
  EXPECT_FALSE(devices[0].properties.contains("vendor")) << "no PoCL slice matches the CPU record";
}

} // namespace
} // namespace prewarm::host
