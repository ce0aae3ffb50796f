// SPDX-License-Identifier: Apache-2.0
#include "command/identity.hpp"
#include "command/custom_capture.hpp"

#include "base/cpu_properties.hpp"
#include "base/files.hpp"
#include "bundle/requirement.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace prewarm::command {
namespace {

using bundle::CacheKind;
using bundle::Requirement;

bool
has(const std::vector<Requirement>& reqs, std::string_view key, std::string_view op, std::string_view value)
{
  return std::find(reqs.begin(), reqs.end(), Requirement{std::string(key), std::string(op), std::string(value)}) !=
         reqs.end();
}

DeviceProperties
pocl_device(std::string name)
{
  return {{"vendor", "cpu"},
          {"opencl.platform", "Portable Computing Language"},
          {"opencl.platform-version", "OpenCL 3.0 PoCL 3.1+debian Linux, LLVM 15.0.6"},
          {"opencl.device", std::move(name)},
          {"opencl.device-version", "OpenCL 3.0 PoCL HSTR: pthread-x86_64"},
          {"opencl.driver", "3.1+debian"}};
}

DeviceProperties
h100(std::string driver = "580.95.05")
{
  return {{"vendor", "nvidia"}, {"nvidia.driver", std::move(driver)}, {"nvidia.sm", "90"}, {"pci-id", "0x2330"}};
}

TEST(Identity, ParsesBothNvidiaProcVersionFormats)
{
  EXPECT_EQ(parse_nvidia_proc_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 "
                                      "22:23:56 UTC 2024\nGCC version:  gcc version 12.3.0\n"),
            "550.54.15");
  EXPECT_EQ(parse_nvidia_proc_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  "
                                      "Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Sep 23 2025\n"),
            "580.95.05");
  EXPECT_EQ(parse_nvidia_proc_version("something else 1.2.3\n"), std::nullopt);
  EXPECT_EQ(parse_nvidia_proc_version(""), std::nullopt);
}

TEST(Identity, ParsesNvidiaSmiCsv)
{
  const auto gpus = parse_nvidia_smi_csv("580.95.05, 9.0, 0x233010DE, NVIDIA H100 80GB HBM3\n"
                                         "580.95.05, 8.9, 0x27B810DE, NVIDIA L4, rev, b\n"
                                         "garbage line\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].at("nvidia.driver"), "580.95.05");
  EXPECT_EQ(gpus[0].at("nvidia.sm"), "90");
  EXPECT_EQ(gpus[0].at("pci-id"), "0x2330");
  EXPECT_EQ(gpus[0].at("vendor"), "nvidia");
  EXPECT_EQ(gpus[1].at("nvidia.sm"), "89");
  EXPECT_EQ(gpus[1].at("pci-id"), "0x27b8");
  EXPECT_EQ(gpus[1].at("nvidia.name"), "NVIDIA L4, rev, b");
  // "[N/A]" where an old driver has no compute_cap: the key is absent, not empty.
  const auto old = parse_nvidia_smi_csv("470.1.2, [N/A], 0x20B010DE, A100\n");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_FALSE(old[0].contains("nvidia.sm"));
}

TEST(Identity, CudaDependsOnDriverAndSm)
{
  IdentityFacts facts;
  facts.nvidia_gpus = {h100()};
  const auto identity = identify_kind(CacheKind::cuda, facts);
  EXPECT_TRUE(identity.warnings.empty());
  EXPECT_EQ(identity.requirements.size(), 2u);
  EXPECT_TRUE(has(identity.requirements, "nvidia.driver", "==", "580.95.05"));
  EXPECT_TRUE(has(identity.requirements, "nvidia.sm", "==", "90"));
  EXPECT_TRUE(std::is_sorted(identity.requirements.begin(), identity.requirements.end()));
}

TEST(Identity, CudaWithoutNvidiaFactsWarns)
{
  const auto identity = identify_kind(CacheKind::cuda, IdentityFacts{});
  EXPECT_TRUE(identity.requirements.empty());
  ASSERT_EQ(identity.warnings.size(), 2u);
  EXPECT_NE(identity.warnings[0].find("nvidia.driver"), std::string::npos);
}

TEST(Identity, DifferingDevicesGiveAnInList)
{
  IdentityFacts facts;
  auto l4 = h100();
  l4["nvidia.sm"] = "89";
  facts.nvidia_gpus = {h100(), l4};
  const auto identity = identify_kind(CacheKind::cuda, facts);
  EXPECT_TRUE(has(identity.requirements, "nvidia.sm", "in", "89,90"));
  EXPECT_TRUE(has(identity.requirements, "nvidia.driver", "==", "580.95.05"));
}

TEST(Identity, FrameworkKindsDependOnFrameworkVersionsAndSm)
{
  IdentityFacts facts;
  facts.nvidia_gpus = {h100()};
  facts.frameworks = {{"framework.torch", "2.11.0+cu128"}, {"framework.triton", "3.6.0"}};
  for (const auto kind : {CacheKind::triton, CacheKind::inductor}) {
    const auto identity = identify_kind(kind, facts);
    EXPECT_TRUE(identity.warnings.empty());
    EXPECT_TRUE(has(identity.requirements, "framework.torch", "==", "2.11.0+cu128"));
    EXPECT_TRUE(has(identity.requirements, "framework.triton", "==", "3.6.0"));
    EXPECT_TRUE(has(identity.requirements, "nvidia.sm", "==", "90"));
    // Triton/Inductor entries carry their own keys; the driver is not one of them.
    EXPECT_FALSE(has(identity.requirements, "nvidia.driver", "==", "580.95.05"));
  }
  facts.frameworks.erase("framework.triton");
  const auto partial = identify_kind(CacheKind::inductor, facts);
  ASSERT_EQ(partial.warnings.size(), 1u);
  EXPECT_NE(partial.warnings[0].find("no triton version"), std::string::npos);
}

// Dynamo's precompiled frames hold bytecode: the Python version is checked
// too, beside torch, triton and the SM (a CPU-only build has no SM).
TEST(Identity, DynamoAlsoDependsOnThePythonVersion)
{
  IdentityFacts facts;
  facts.nvidia_gpus = {h100()};
  facts.frameworks = {{"framework.torch", "2.11.0+cu130"}, {"framework.triton", "3.6.0"},
                      {"framework.python", "3.12.3"}};
  const auto identity = identify_kind(CacheKind::dynamo, facts);
  EXPECT_TRUE(identity.warnings.empty());
  EXPECT_TRUE(has(identity.requirements, "framework.torch", "==", "2.11.0+cu130"));
  EXPECT_TRUE(has(identity.requirements, "framework.python", "==", "3.12.3"));
  EXPECT_TRUE(has(identity.requirements, "nvidia.sm", "==", "90"));
  // inductor alone does not care which Python traced it.
  EXPECT_FALSE(has(identify_kind(CacheKind::inductor, facts).requirements, "framework.python", "==", "3.12.3"));
  facts.frameworks.erase("framework.python");
  const auto partial = identify_kind(CacheKind::dynamo, facts);
  ASSERT_EQ(partial.warnings.size(), 1u);
  EXPECT_NE(partial.warnings[0].find("no python version"), std::string::npos);
}

// Bytecode depends on the Python version alone (magic number, cpython-3XY in
// each name): the pycache slice requires framework.python and nothing of the
// device or of torch, so one slice serves every GPU of that Python.
TEST(Identity, PycacheDependsOnThePythonVersionOnly)
{
  IdentityFacts facts;
  facts.nvidia_gpus = {h100()};
  facts.frameworks = {{"framework.torch", "2.11.0+cpu"}, {"framework.triton", "3.6.0"},
                      {"framework.python", "3.11.7"}};
  const auto identity = identify_kind(CacheKind::pycache, facts);
  EXPECT_TRUE(identity.warnings.empty());
  EXPECT_EQ(identity.requirements, (std::vector<Requirement>{{"framework.python", "==", "3.11.7"}}));
  // Recorded only (a bundle meant to install where no interpreter is found).
  EXPECT_TRUE(identify_kind(CacheKind::pycache, facts, FrameworkRequirements::recorded).requirements.empty());
  facts.frameworks.erase("framework.python");
  const auto unknown = identify_kind(CacheKind::pycache, facts);
  EXPECT_TRUE(unknown.requirements.empty());
  ASSERT_EQ(unknown.warnings.size(), 1u);
  EXPECT_NE(unknown.warnings[0].find("pycache: no Python version known"), std::string::npos);
}

TEST(Identity, PoclDependsOnItsBuildAndTheCpu)
{
  IdentityFacts facts;
  DeviceProperties gpu = h100();
  gpu["opencl.platform"] = "NVIDIA CUDA";
  gpu["opencl.device"] = "NVIDIA H100";
  facts.opencl_devices = {gpu, pocl_device("pthread-skylake-avx512")};
  const auto identity = identify_kind(CacheKind::pocl, facts);
  EXPECT_TRUE(identity.warnings.empty());
  EXPECT_EQ(identity.requirements.size(), 5u);
  EXPECT_TRUE(has(identity.requirements, "vendor", "==", "cpu"));
  EXPECT_TRUE(has(identity.requirements, "opencl.device-version", "==", "OpenCL 3.0 PoCL HSTR: pthread-x86_64"));
  EXPECT_TRUE(has(identity.requirements, "opencl.device", "==", "pthread-skylake-avx512"));
  EXPECT_TRUE(has(identity.requirements, "opencl.driver", "==", "3.1+debian"));
  EXPECT_TRUE(has(identity.requirements, "opencl.platform-version", "==",
                  "OpenCL 3.0 PoCL 3.1+debian Linux, LLVM 15.0.6"));

  // PoCL 3.1's real platform version has a double space: not writable in a
  // bundle, so it is left out rather than normalised into a value no host has.
  facts.opencl_devices[1]["opencl.platform-version"] = "OpenCL 3.0 PoCL 3.1+debian  Linux, LLVM 15.0.6";
  const auto spaced = identify_kind(CacheKind::pocl, facts);
  EXPECT_EQ(spaced.requirements.size(), 4u);
  for (const auto& r : spaced.requirements) {
    EXPECT_NE(r.key, "opencl.platform-version");
  }

  const auto none = identify_kind(CacheKind::pocl, IdentityFacts{});
  EXPECT_TRUE(none.requirements.empty());
  ASSERT_EQ(none.warnings.size(), 1u);
}

TEST(Identity, LayerRecordsRequireTheDevicesTheyWereMadeOn)
{
  // The layer's PoCL binaries are for this CPU and this PoCL build: a slice
  // that says "any host" would install records that can never hit.
  IdentityFacts facts;
  facts.opencl_devices = {pocl_device("pthread-skylake-avx512")};
  const auto identity = identify_kind(CacheKind::programs, facts);
  EXPECT_TRUE(identity.warnings.empty());
  EXPECT_EQ(identity.requirements, identify_kind(CacheKind::pocl, facts).requirements) << "one slice with the pocl kind";
  EXPECT_TRUE(has(identity.requirements, "opencl.device", "==", "pthread-skylake-avx512"));
  EXPECT_TRUE(has(identity.requirements, "opencl.driver", "==", "3.1+debian"));

  const auto none = identify_kind(CacheKind::programs, IdentityFacts{});
  EXPECT_TRUE(none.requirements.empty());
  ASSERT_EQ(none.warnings.size(), 1u);
}

TEST(Identity, NeoAndSyclDependOnPciIdAndDriver)
{
  IdentityFacts facts;
  facts.opencl_devices = {{{"vendor", "intel"},
                           {"pci-id", "0x56a0"},
                           {"intel.driver", "22.43.24595"},
                           {"opencl.driver", "22.43.24595.30"},
                           {"opencl.device", "Intel(R) Arc(TM) A770 Graphics"}}};
  const auto neo = identify_kind(CacheKind::neo, facts);
  EXPECT_TRUE(has(neo.requirements, "pci-id", "==", "0x56a0"));
  // Every spelling of the release: Debian 12's NEO 22.43 names its Level
  // Zero driver libze_intel_gpu.so.1.3.24595, and a host with no OpenCL ICD
  // reports that "1.3.24595" (as the virtual device's slices require it).
  const auto driver = std::find_if(neo.requirements.begin(), neo.requirements.end(),
                                   [](const Requirement& r) { return r.key == "intel.driver"; });
  ASSERT_NE(driver, neo.requirements.end());
  EXPECT_EQ(driver->op, "in");
  EXPECT_NE(("," + driver->value + ",").find(",22.43.24595,"), std::string::npos) << driver->value;
  EXPECT_NE(("," + driver->value + ",").find(",1.3.24595,"), std::string::npos) << driver->value;
  EXPECT_EQ(neo.requirements.size(), 2u);
  const auto sycl = identify_kind(CacheKind::sycl, facts);
  EXPECT_TRUE(has(sycl.requirements, "opencl.device", "==", "Intel(R) Arc(TM) A770 Graphics"));
  EXPECT_EQ(sycl.requirements.size(), 3u);
}

TEST(Identity, MergeRequirementsDeduplicates)
{
  IdentityFacts facts;
  facts.nvidia_gpus = {h100()};
  facts.frameworks = {{"framework.torch", "2.11.0"}, {"framework.triton", "3.6.0"}};
  const auto merged = merge_requirements(
    {identify_kind(CacheKind::cuda, facts), identify_kind(CacheKind::triton, facts),
     identify_kind(CacheKind::inductor, facts)});
  EXPECT_EQ(merged.size(), 4u); // driver, sm, torch, triton
  EXPECT_TRUE(std::is_sorted(merged.begin(), merged.end()));
}

TEST(Identity, LooksLikePython)
{
  EXPECT_TRUE(looks_like_python({"python"}));
  EXPECT_TRUE(looks_like_python({"python3", "x.py"}));
  EXPECT_TRUE(looks_like_python({"/usr/bin/python3.11"}));
  EXPECT_FALSE(looks_like_python({"python-config"}));
  EXPECT_FALSE(looks_like_python({"bash", "python3"}));
  EXPECT_FALSE(looks_like_python({}));
}

TEST(Identity, FrameworkProbeRunsTheSamePythonAndToleratesMissingModules)
{
  auto dir = TempDir::create("test_only_identity-");
  ASSERT_TRUE(dir);
  // A stand-in torch distribution on PYTHONPATH (its metadata is what the
  // probe reads): the probe must find it with the program's environment, and
  // must not fail on the missing triton.
  const auto dist_info = dir->path() / "torch-9.9.9+test_only.dist-info";
  std::filesystem::create_directories(dist_info);
  ASSERT_TRUE(write_file_atomic(dist_info / "METADATA",
                                "Metadata-Version: 2.1\nName: torch\nVersion: 9.9.9+test_only\n"));
  Environment env = inherited_environment();
  env["PYTHONPATH"] = dir->path().string();
  std::vector<std::string> warnings;
  const auto probed = probe_frameworks("/usr/bin/python3", env, dir->path(), warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_TRUE(probed.versions.contains("framework.torch"));
  EXPECT_EQ(probed.versions.at("framework.torch"), "9.9.9+test_only");
  // Where it was found: the directory the installer reads without Python.
  EXPECT_EQ(probed.site_packages, std::vector<std::string>{std::filesystem::absolute(dir->path()).lexically_normal().string()});

  const auto none = probe_frameworks("/nonexistent/test_only_python", env, dir->path(), warnings);
  EXPECT_TRUE(none.versions.empty());
  EXPECT_TRUE(none.site_packages.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("test_only_python"), std::string::npos);
}

// A custom cache's slice requires what the cache depends on, no more
// (bundle/app_hint.hpp): Numba's holds nothing for the OpenCL device (numba
// 0.68 records and checks the CPU itself), so a host without PoCL installs it.
TEST(Identity, ACustomCacheWithoutOpenClCodeRequiresNoOpenClDevice)
{
  const DeviceProperties pocl{{std::string(prop::vendor), "cpu"}, {std::string(prop::opencl_device), "cpu-haswell"}};
  IdentityFacts on_pocl;
  on_pocl.opencl_devices = {pocl};
  on_pocl.cpu = {{std::string(prop::cpu_arch), "x86_64"}, {std::string(prop::cpu_isa_level), "3"}};
  IdentityFacts none;
  std::vector<std::string> warnings;
  const std::vector<CustomCacheRequest> numba = {{"numba", "NUMBA_CACHE_DIR", {}}};
  EXPECT_FALSE(custom_caches_need_opencl_device(numba));
  EXPECT_TRUE(custom_cache_requirements(numba, on_pocl, warnings).empty());
  EXPECT_TRUE(custom_cache_requirements(numba, none, warnings).empty());
  EXPECT_TRUE(warnings.empty()) << "nothing to warn of: the cache needs no device";

  // hashcat's kernels are what the OpenCL driver built: PoCL's device.
  const std::vector<CustomCacheRequest> hashcat = {{"hashcat", "XDG_CACHE_HOME", "hashcat/kernels"}};
  EXPECT_TRUE(custom_caches_need_opencl_device(hashcat));
  const auto requirements = custom_cache_requirements(hashcat, on_pocl, warnings);
  EXPECT_TRUE(std::ranges::any_of(requirements, [](const bundle::Requirement& r) {
    return r.key == prop::opencl_device && r.value == "cpu-haswell";
  }));
  EXPECT_TRUE(custom_cache_requirements(hashcat, none, warnings).empty());
  EXPECT_EQ(warnings.size(), 1u) << "no device known for a cache that needs one";

  // Taichi's (CPU backend, taichi 1.7.4) likewise.
  const std::vector<CustomCacheRequest> taichi = {{"taichi", "TI_OFFLINE_CACHE_FILE_PATH", {}}};
  EXPECT_FALSE(custom_caches_need_opencl_device(taichi));
  EXPECT_TRUE(custom_cache_requirements(taichi, on_pocl, warnings).empty());

  // Mixed: the slice is shared, so it requires the device.
  const std::vector<CustomCacheRequest> both = {numba[0], hashcat[0]};
  EXPECT_TRUE(custom_caches_need_opencl_device(both));
}

bool
has_key(const std::vector<bundle::Requirement>& requirements, std::string_view key)
{
  return std::ranges::any_of(requirements, [&](const bundle::Requirement& r) { return r.key == key; });
}

// The CPU is a target of its own (issue: CPU applications): JAX's cache made
// on the cpu target requires the CPU and jax/jaxlib as JAX sees them, never
// PoCL, which JAX never opened; on a GPU target it still requires that GPU.
TEST(Identity, ACpuApplicationsCacheRequiresTheCpuNotPocl)
{
  IdentityFacts facts;
  facts.opencl_devices = {{{std::string(prop::vendor), "cpu"},
                           {std::string(prop::opencl_device), "pthread-haswell"},
                           {std::string(prop::opencl_driver), "6.0"}}};
  facts.cpu = {{std::string(prop::cpu_arch), "x86_64"},
               {std::string(prop::cpu_isa_level), "3"},
               {std::string(prop::os_kernel_release), "6.1.0-28-amd64"}};
  facts.frameworks = {{"framework.jax", "0.10.2"},
                      {"framework.jaxlib", "0.10.2"},
                      {"framework.openvino", "2026.4.1"},
                      {"framework.python", "3.11.2"}};
  std::vector<std::string> warnings;
  const std::vector<CustomCacheRequest> jax = {{"jax", "JAX_COMPILATION_CACHE_DIR", {}}};
  const auto required = custom_cache_requirements(jax, facts, warnings);
  const std::vector<bundle::Requirement> expected = {{"cpu.arch", "==", "x86_64"},
                                                     {"cpu.isa-level", ">=", "3"},
                                                     {"framework.jax", "==", "0.10.2"},
                                                     {"framework.jaxlib", "==", "0.10.2"}};
  EXPECT_EQ(required, expected);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  for (const auto& r : required) {
    EXPECT_TRUE(bundle::validate_requirement(r)) << r.key << " is a key every runtime of this version evaluates";
  }

  // An unknown cache (OpenVINO's CACHE_DIR behind the application's own
  // variable): the CPU and every framework version the build read, not
  // Python's, not the kernel release.
  const std::vector<CustomCacheRequest> unknown = {{"openvino", "OV_CACHE_DIR", {}}};
  const auto unknown_required = custom_cache_requirements(unknown, facts, warnings);
  EXPECT_TRUE(has_key(unknown_required, "framework.openvino"));
  EXPECT_TRUE(has_key(unknown_required, "cpu.isa-level"));
  EXPECT_FALSE(has_key(unknown_required, "framework.python"));
  EXPECT_FALSE(has_key(unknown_required, "os.kernel-release"));
  EXPECT_FALSE(has_key(unknown_required, "opencl.device"));

  // The same JAX cache made on a GPU: that device, as before.
  facts.opencl_devices = {{{std::string(prop::vendor), "intel"}, {std::string(prop::opencl_device), "Arc B580"}}};
  const auto on_gpu = custom_cache_requirements(jax, facts, warnings);
  EXPECT_TRUE(has_key(on_gpu, "opencl.device"));
  EXPECT_FALSE(has_key(on_gpu, "cpu.arch"));
}

} // namespace
} // namespace prewarm::command
