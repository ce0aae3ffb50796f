// SPDX-License-Identifier: Apache-2.0
#include "base/files.hpp"
#include "host/host_description_file.hpp"
#include "host/nvidia_probe.hpp"
#include "host/opencl_probe.hpp"
#include "host/pci_probe.hpp"
#include "host/framework_probe.hpp"
#include "host/private_home.hpp"
#include "host/probe_host.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

using namespace prewarm;
using namespace prewarm::host;
namespace fs = std::filesystem;

namespace {

TempDir
scratch()
{
  auto dir = TempDir::create("prewarm-host-test-");
  EXPECT_TRUE(dir);
  return std::move(*dir);
}

void
write(const fs::path& path, std::string_view text)
{
  fs::create_directories(path.parent_path());
  ASSERT_TRUE(write_file_atomic(path, text, 0644, Durability::none));
}

// A fake sysfs PCI device directory.
void
add_pci_device(const fs::path& sys, std::string_view address, std::string_view vendor, std::string_view device,
               std::string_view revision, std::string_view class_code)
{
  const auto dir = sys / "bus/pci/devices" / address;
  write(dir / "vendor", std::string(vendor) + "\n");
  write(dir / "device", std::string(device) + "\n");
  write(dir / "revision", std::string(revision) + "\n");
  write(dir / "class", std::string(class_code) + "\n");
}

// /proc and /sys of a host with one H100 (driver 580.159.04, PCI id 0x2330)
// and no nvidia-smi (absent: must not fail).
HostProbeOptions
fake_h100_host(const fs::path& dir)
{
  write(dir / "proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Wed Jul 16 2025\n");
  add_pci_device(dir / "sys", "0000:18:00.0", "0x10de", "0x2330", "0xa1", "0x030200");
  HostProbeOptions options;
  options.proc_root = dir / "proc";
  options.sys_root = dir / "sys";
  options.nvidia_smi = "prewarm-test-no-such-nvidia-smi";
  return options;
}

// Restores an environment variable on scope exit.
class ScopedEnv
{
public:
  ScopedEnv(const char* name, const std::string& value) : m_name(name)
  {
    if (const char* old = std::getenv(name)) {
      m_old = old;
    }
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv()
  {
    if (m_old) {
      ::setenv(m_name, m_old->c_str(), 1);
    } else {
      ::unsetenv(m_name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  const char* m_name;
  std::optional<std::string> m_old;
};

} // namespace

TEST(NvidiaDriverVersion, ProprietaryModuleLine)
{
  const auto v = parse_nvidia_driver_version(
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Wed Jul 16 22:33:40 UTC 2025\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, "580.159.04");
}

TEST(NvidiaDriverVersion, OpenModuleLine)
{
  const auto v = parse_nvidia_driver_version(
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (dvs-builder@U16)\n");
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, "550.54.15");
}

TEST(NvidiaDriverVersion, NoVersionIsNullopt)
{
  EXPECT_FALSE(parse_nvidia_driver_version("GCC version: gcc version 12.2.0\n"));
  EXPECT_FALSE(parse_nvidia_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  unknown\n"));
}

TEST(NvidiaSmi, ParsesQueryLinesAndSkipsGarbage)
{
  const auto gpus = parse_nvidia_smi_query("00000000:18:00.0, 9.0, 0x233010DE\n"
                                           "No devices were found\n"
                                           "00000000:2A:00.0, 8.6, 0x220410DE\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].pci_address, "0000:18:00.0");
  EXPECT_EQ(gpus[0].sm, "90");
  EXPECT_EQ(gpus[0].pci_id, "0x2330");
  EXPECT_EQ(gpus[1].pci_address, "0000:2a:00.0");
  EXPECT_EQ(gpus[1].sm, "86");
}

TEST(PciScan, FindsDisplayClassDevicesOnly)
{
  auto dir = scratch();
  const auto sys = dir.path() / "sys";
  add_pci_device(sys, "0000:00:02.0", "0x8086", "0x46a6", "0x0c", "0x030000");
  add_pci_device(sys, "0000:03:00.0", "0x8086", "0x56A5", "0x05", "0x038000"); // uppercase in sysfs
  add_pci_device(sys, "0000:00:1f.3", "0x8086", "0x51c8", "0x01", "0x040380"); // audio: not a GPU
  const auto gpus = scan_pci_display_devices(sys);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].address, "0000:00:02.0");
  EXPECT_EQ(gpus[1].device_id, "0x56a5");
  EXPECT_EQ(gpus[1].revision, "0x05");
}

TEST(PciScan, NoSysfsIsAnEmptyList)
{
  auto dir = scratch();
  EXPECT_TRUE(scan_pci_display_devices(dir.path() / "absent").empty());
}

TEST(MergeFindings, NvidiaIdentityGoesIntoTheOpenclDevice)
{
  HostFindings f;
  f.opencl_devices.push_back({"OpenCL 0: NVIDIA H100", {{"vendor", "nvidia"}, {"opencl.device", "NVIDIA H100"}}});
  f.nvidia_driver = "580.159.04";
  f.nvidia_gpus.push_back({"0000:18:00.0", "90", "0x2330"});
  f.pci_gpus.push_back({"0000:18:00.0", "0x10de", "0x2330", "0xa1", "0x030200"});
  const auto devices = merge_host_findings(f);
  ASSERT_EQ(devices.size(), 1u);
  const auto& p = devices[0].properties;
  EXPECT_EQ(p.at("nvidia.driver"), "580.159.04");
  EXPECT_EQ(p.at("nvidia.sm"), "90");
  EXPECT_EQ(p.at("pci-id"), "0x2330");
  EXPECT_EQ(p.at("pci-revision"), "0xa1");
  EXPECT_EQ(p.at("opencl.device"), "NVIDIA H100");
}

TEST(MergeFindings, MixedModelsStaySeparateRecords)
{
  HostFindings f;
  f.opencl_devices.push_back({"OpenCL 0: Intel Arc", {{"vendor", "intel"}}});
  f.pci_gpus.push_back({"0000:00:02.0", "0x8086", "0x46a6", "0x0c", "0x030000"});
  f.pci_gpus.push_back({"0000:03:00.0", "0x8086", "0x56a0", "0x08", "0x030000"});
  const auto devices = merge_host_findings(f);
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_FALSE(devices[0].properties.contains("pci-id")); // not obvious which one it is
  EXPECT_EQ(devices[1].properties.at("vendor"), "intel");
  EXPECT_EQ(devices[2].properties.at("pci-id"), "0x56a0");
}

TEST(MergeFindings, GpuWithoutOpenclDriverIsStillListed)
{
  HostFindings f;
  f.opencl_devices.push_back({"OpenCL 0: cpu", {{"vendor", "cpu"}}});
  f.pci_gpus.push_back({"0000:03:00.0", "0x8086", "0x56a5", "0x05", "0x030000"});
  const auto devices = merge_host_findings(f);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].properties.at("pci-id"), "0x56a5");
  EXPECT_NE(devices[1].description.find("0000:03:00.0"), std::string::npos);
}

TEST(MergeFindings, LevelZeroDeviceFillsTheSysfsRecordOfTheSameGpu)
{
  // An Intel GPU with a Level Zero driver and no OpenCL ICD: sysfs gives the
  // revision, Level Zero the NEO version an AOT slice requires.
  HostFindings f;
  f.opencl_devices.push_back({"OpenCL 0: cpu", {{"vendor", "cpu"}}});
  f.pci_gpus.push_back({"0000:03:00.0", "0x8086", "0x56a5", "0x05", "0x030000"});
  f.level_zero_devices.push_back({"level-zero 0: Arc A380",
                                  {{"vendor", "intel"}, {"pci-id", "0x56a5"}, {"intel.driver", "22.43.24595"},
                                   {"level-zero.device", "Intel(R) Arc(TM) A380 Graphics"}}});
  const auto devices = merge_host_findings(f);
  ASSERT_EQ(devices.size(), 2u);
  const auto& p = devices[1].properties;
  EXPECT_EQ(p.at("pci-revision"), "0x05");
  EXPECT_EQ(p.at("intel.driver"), "22.43.24595");
  EXPECT_EQ(p.at("level-zero.device"), "Intel(R) Arc(TM) A380 Graphics");
}

TEST(MergeFindings, LevelZeroKeepsWhatOpenclReportedAndListsOtherGpus)
{
  HostFindings f;
  f.opencl_devices.push_back({"OpenCL 0: Arc A380", {{"vendor", "intel"}, {"pci-id", "0x56a5"}, {"intel.driver", "23.5.25593"}}});
  f.level_zero_devices.push_back({"level-zero 0", {{"vendor", "intel"}, {"pci-id", "0x56a5"}, {"intel.driver", "22.43.24595"}}});
  f.level_zero_devices.push_back({"level-zero 1", {{"vendor", "intel"}, {"pci-id", "0xe20b"}, {"intel.driver", "22.43.24595"}}});
  const auto devices = merge_host_findings(f);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].properties.at("intel.driver"), "23.5.25593"); // the OpenCL ICD's own
  EXPECT_EQ(devices[1].description, "level-zero 1");
  EXPECT_EQ(devices[1].properties.at("pci-id"), "0xe20b");
}

TEST(MergeFindings, DriverAloneMakesARecord)
{
  HostFindings f;
  f.nvidia_driver = "550.54.15";
  const auto devices = merge_host_findings(f);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].properties.at("nvidia.driver"), "550.54.15");
}

TEST(MergeFindings, FrameworksGoIntoEveryRecord)
{
  HostFindings f;
  f.opencl_devices.push_back({"OpenCL 0: NVIDIA H200", {{"vendor", "nvidia"}}});
  f.nvidia_driver = "580.159.04";
  f.pci_gpus.push_back({"0000:03:00.0", "0x8086", "0x56a5", "0x05", "0x030000"});
  f.frameworks = {{"framework.torch", "2.11.0+cu130"}, {"framework.triton", "3.6.0"}};
  const auto devices = merge_host_findings(f);
  ASSERT_EQ(devices.size(), 2u);
  for (const auto& d : devices) {
    EXPECT_EQ(d.properties.at("framework.torch"), "2.11.0+cu130") << d.description;
    EXPECT_EQ(d.properties.at("framework.triton"), "3.6.0") << d.description;
  }
}

TEST(MergeFindings, FrameworksAloneMakeARecord)
{
  HostFindings f;
  f.frameworks = {{"framework.torch", "2.11.0+cpu"}};
  const auto devices = merge_host_findings(f);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].properties.at("framework.torch"), "2.11.0+cpu");
}

TEST(FrameworkVersions, ParsesProbeOutput)
{
  const auto versions = parse_framework_versions("noise\nframework.torch 2.11.0+cu128\nframework.triton  3.6.0 \n"
                                                 "framework.bad value with spaces\nframework.UPPER 1\n");
  EXPECT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions.at("framework.torch"), "2.11.0+cu128");
  EXPECT_EQ(versions.at("framework.triton"), "3.6.0");
}

// The real interpreter reads a distribution's metadata without importing it:
// a stand-in torch-*.dist-info on PYTHONPATH is found, the absent triton is
// not reported, and no interpreter is an error the probe turns into a log line.
TEST(FrameworkVersions, ReadFromTheInterpretersPackageMetadata)
{
  if (!std::filesystem::exists("/usr/bin/python3")) {
    GTEST_SKIP() << "no /usr/bin/python3";
  }
  auto dir = scratch();
  write(dir.path() / "torch-9.9.9+test_only.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: torch\nVersion: 9.9.9+test_only\n");
  // The stand-in must not be importable: only its metadata is read.
  ::setenv("PYTHONPATH", dir.path().c_str(), 1);
  const auto versions = probe_framework_versions("/usr/bin/python3", std::chrono::seconds(20));
  ::unsetenv("PYTHONPATH");
  ASSERT_TRUE(versions) << versions.error().message();
  EXPECT_EQ(versions->at("framework.torch"), "9.9.9+test_only");

  const auto missing = probe_framework_versions("/nonexistent/test_only_python3", std::chrono::seconds(5));
  EXPECT_FALSE(missing);
}

// The installer reads the versions from the files of the site-packages the
// build recorded, without running Python: the same answer as importlib's
// (the real interpreter reading the same metadata), and framework.python
// from the environment's own record of its interpreter.
TEST(FrameworkVersions, ReadFromSitePackagesWithoutPython)
{
  auto dir = scratch();
  const auto venv = dir.path() / "venv";
  const auto site = venv / "lib/python3.11/site-packages";
  write(site / "torch-2.11.0+cu130.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\nSummary: x\n\nVersion: 0 (the body)\n");
  write(site / "triton-3.6.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: triton\nVersion: 3.6.0\n");
  write(site / "intel_extension_for_pytorch-2.8.10+xpu.dist-info/METADATA",
        "Name: intel-extension-for-pytorch\nVersion: 2.8.10+xpu\n");
  write(site / "torchvision-0.26.0.dist-info/METADATA", "Name: torchvision\nVersion: 0.26.0\n");
  write(venv / "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n");
  const auto read = read_framework_versions(site);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read, (FrameworkVersions{{"framework.ipex", "2.8.10+xpu"}, {"framework.python", "3.11.7"},
                                      {"framework.torch", "2.11.0+cu130"}, {"framework.triton", "3.6.0"}}));
  if (std::filesystem::exists("/usr/bin/python3")) {
    ::setenv("PYTHONPATH", site.c_str(), 1);
    const auto probed = probe_framework_versions("/usr/bin/python3", std::chrono::seconds(20));
    ::unsetenv("PYTHONPATH");
    ASSERT_TRUE(probed) << probed.error().message();
    for (const auto* key : {"framework.torch", "framework.triton", "framework.ipex"}) {
      EXPECT_EQ(read->at(key), probed->at(key)) << key << ": importlib.metadata reads another version";
    }
  }
  // virtualenv and uv write version_info; conda records its python package.
  write(venv / "pyvenv.cfg", "home = /usr/bin\nversion_info = 3.12.4.final.0\n");
  EXPECT_EQ(read_framework_versions(site)->at("framework.python"), "3.12.4");
  fs::remove(venv / "pyvenv.cfg");
  write(venv / "conda-meta/python-3.10.14-h955ad1f_0.json", "{}");
  EXPECT_EQ(read_framework_versions(site)->at("framework.python"), "3.10.14");
  // A system Python's dist-packages records no interpreter version.
  fs::remove_all(venv / "conda-meta");
  EXPECT_FALSE(read_framework_versions(site)->contains("framework.python"));

  const auto absent = read_framework_versions(dir.path() / "nowhere");
  ASSERT_FALSE(absent);
  EXPECT_NE(absent.error().message().find("nowhere"), std::string::npos);
  const auto empty = read_framework_versions(venv);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message().find("no torch"), std::string::npos) << empty.error().message();
}

// Where the installer looks, in order: PREWARM_PYTHON when given, the
// recorded site-packages when it exists here, else python3 (here: an
// interpreter that does not exist, so none), and the message says what was
// tried.
TEST(FrameworkVersions, TheRecordedSitePackagesComeBeforeAnyInterpreter)
{
  auto dir = scratch();
  const auto site = dir.path() / "app/lib/python3.11/site-packages";
  write(site / "torch-2.11.0.dist-info/METADATA", "Name: torch\nVersion: 2.11.0\n");
  ::unsetenv("PREWARM_PYTHON");
  const FrameworkSearch search{true, {dir.path() / "elsewhere", site}};
  const auto found = find_framework_versions(search, "/nonexistent/test_only_python3", std::chrono::seconds(5));
  EXPECT_EQ(found.versions, (FrameworkVersions{{"framework.torch", "2.11.0"}}));
  EXPECT_EQ(found.source, "site-packages " + site.string());

  const FrameworkSearch gone{true, {dir.path() / "elsewhere"}};
  const auto none = find_framework_versions(gone, "/nonexistent/test_only_python3", std::chrono::seconds(5));
  EXPECT_TRUE(none.versions.empty());
  EXPECT_NE(none.source.find((dir.path() / "elsewhere").string()), std::string::npos) << none.source;
  EXPECT_NE(none.source.find("PREWARM_PYTHON"), std::string::npos) << none.source;

  // The operator's interpreter wins over the record.
  ::setenv("PREWARM_PYTHON", "/nonexistent/test_only_python3", 1);
  const auto given = find_framework_versions(search, "/nonexistent/test_only_python3", std::chrono::seconds(5));
  ::unsetenv("PREWARM_PYTHON");
  EXPECT_TRUE(given.versions.empty()) << "PREWARM_PYTHON was not the source: " << given.source;
}

TEST(FrameworkVersions, SitePackagesLinesOfTheProbe)
{
  EXPECT_EQ(parse_site_packages("framework.torch 2.11.0\nsite-packages /v/lib/python3.11/site-packages\n"
                                "site-packages relative/ignored\nsite-packages /v/lib/python3.11/site-packages\n"
                                "site-packages /opt/conda/lib/python3.11/site-packages\n"),
            (std::vector<std::string>{"/v/lib/python3.11/site-packages", "/opt/conda/lib/python3.11/site-packages"}));
}

TEST(FrameworkVersions, InterpreterFromTheEnvironment)
{
  ::setenv("PREWARM_PYTHON", "none", 1);
  EXPECT_EQ(framework_python_from_environment(), "");
  ::setenv("PREWARM_PYTHON", "/opt/app/.venv/bin/python", 1);
  EXPECT_EQ(framework_python_from_environment(), "/opt/app/.venv/bin/python");
  ::unsetenv("PREWARM_PYTHON");
  EXPECT_EQ(framework_python_from_environment(), "python3");
}

TEST(HostDescriptionFile, RoundTripAndErrors)
{
  auto dir = scratch();
  const auto file = dir.path() / "host.json";
  write(file, R"([{"description": "test A770", "vendor": "intel", "pci-id": "0x56a0"}, {"vendor": "cpu"}])");
  auto devices = load_host_description(file);
  ASSERT_TRUE(devices) << devices.error().message();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].description, "test A770");
  EXPECT_FALSE((*devices)[0].properties.contains("description"));
  EXPECT_EQ((*devices)[1].description, "test device 1");

  auto again = parse_host_description(host_description_json(*devices), "round trip");
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)[0].properties, (*devices)[0].properties);

  write(file, R"([{"vendor": 3}])");
  auto bad = load_host_description(file);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().category(), Errc::usage);
  EXPECT_NE(bad.error().message().find("element 0"), std::string::npos);
}

TEST(ProbeHost, TestDoubleReplacesTheProbe)
{
  auto dir = scratch();
  const auto file = dir.path() / "host.json";
  write(file, R"([{"vendor": "intel", "pci-id": "0x56a5"}])");
  ScopedEnv env("PREWARM_HOST_DEVICES", file.string());
  auto devices = probe_host();
  ASSERT_TRUE(devices);
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].properties.at("pci-id"), "0x56a5");
}

TEST(ProbeHost, FakeProcAndSysWithoutOpencl)
{
  auto dir = scratch();
  auto options = fake_h100_host(dir.path());
  options.opencl = OpenclProbe::disabled;
  options.level_zero = LevelZeroProbe::disabled;
  auto devices = probe_host(options);
  ASSERT_TRUE(devices) << devices.error().message();
  ASSERT_EQ(devices->size(), 2u) << "the GPU, then the CPU record";
  EXPECT_TRUE(devices->back().properties.contains("cpu.arch"));
  EXPECT_EQ((*devices)[0].properties.at("vendor"), "nvidia");
  EXPECT_EQ((*devices)[0].properties.at("pci-id"), "0x2330");
  EXPECT_EQ((*devices)[0].properties.at("nvidia.driver"), "580.159.04");
}

TEST(ProbeHost, RealOpenclFindsThePoclCpuDevice)
{
  if (!opencl_probe_available()) {
    GTEST_SKIP() << "built without OpenCL";
  }
  auto dir = scratch();
  HostProbeOptions options;
  options.proc_root = dir.path(); // no NVIDIA here either way
  options.sys_root = dir.path();
  auto devices = probe_host(options);
  ASSERT_TRUE(devices) << devices.error().message();
  bool cpu = false;
  for (const auto& d : *devices) {
    cpu = cpu || (d.properties.contains("vendor") && d.properties.at("vendor") == "cpu" &&
                  d.properties.contains("opencl.device"));
  }
  EXPECT_TRUE(cpu) << describe_host(*devices);
}

// The builder enumerates OpenCL in its own child and adds the PCI identity
// through with_gpu_identity(): an NVIDIA OpenCL device that reports no PCI id
// gets sysfs's, so an H100 is told from an H200 (both sm 90).
TEST(GpuIdentity, PciIdGoesIntoTheBuildersOpenclRecords)
{
  auto dir = scratch();
  const auto options = fake_h100_host(dir.path());
  std::vector<HostDevice> opencl{{"OpenCL 0: pocl", {{"vendor", "cpu"}}},
                                 {"OpenCL 1: NVIDIA H100", {{"vendor", "nvidia"}, {"nvidia.sm", "90"}}}};
  const auto merged = with_gpu_identity(opencl, options);
  ASSERT_GE(merged.size(), 2u);
  EXPECT_EQ(merged[0].description, "OpenCL 0: pocl");
  EXPECT_FALSE(merged[0].properties.contains("pci-id"));
  EXPECT_EQ(merged[1].description, "OpenCL 1: NVIDIA H100");
  EXPECT_EQ(merged[1].properties.at("pci-id"), "0x2330");
  EXPECT_EQ(merged[1].properties.at("nvidia.driver"), "580.159.04");
}

// PoCL reports no device when it cannot make its cache under HOME; the probe
// child gets a private home then, and only then.
TEST(PrivateHome, OnlyWhenHomeIsUnusableAndRemovedAfter)
{
  auto dir = scratch();
  const ScopedEnv no_pocl_cache("POCL_CACHE_DIR", "");
  {
    const ScopedEnv home("HOME", dir.path().string());
    const PrivateHomeIfUnusable probe_home;
    EXPECT_TRUE(probe_home.directory().empty());
    EXPECT_EQ(std::string(std::getenv("HOME")), dir.path().string());
  }
  write(dir.path() / "file", "not a directory\n");
  const ScopedEnv home("HOME", (dir.path() / "file").string());
  const ScopedEnv xdg("XDG_CACHE_HOME", "");
  fs::path made;
  {
    const PrivateHomeIfUnusable probe_home;
    made = probe_home.directory();
    ASSERT_FALSE(made.empty());
    EXPECT_EQ(std::string(std::getenv("HOME")), made.string());
    EXPECT_EQ(std::string(std::getenv("POCL_CACHE_DIR")), (made / ".cache/pocl").string());
    EXPECT_TRUE(home_is_usable(std::getenv("HOME")));
  }
  EXPECT_FALSE(fs::exists(made));
}
