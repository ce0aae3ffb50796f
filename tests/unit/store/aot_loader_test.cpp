// SPDX-License-Identifier: Apache-2.0
// The OpenCL half of AOT serving (store/aot_loader.hpp) with real parts: the
// real ocloc makes the zebins (acm-g11 for the Arc A380, tgllp for Iris Xe),
// and the real PoCL CPU device is handed them. PoCL cannot run an Intel GPU
// binary, so on this machine the binary-load step is REJECTED by the driver
// and the fallback (program store / source build) must build and run the
// program correctly. No Intel GPU is here: nothing below validates hardware.
#include "aot_store_fixture.hpp"
#include "base/files.hpp"
#include "opencl/check.hpp"
#include "opencl/device.hpp"
#include "store/aot_loader.hpp"
#include "store/program_store.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <optional>
#include <vector>

namespace prewarm::store {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_source_name = "test_only_scale.cl";
constexpr std::string_view k_source = R"(
__kernel void scale(__global float* x, const float factor) {
  const int i = get_global_id(0);
  x[i] = x[i] * factor + OFFSET;
}
)";
constexpr std::string_view k_options = "-DOFFSET=1.5f";

class AotLoaderTest : public ::testing::Test
{
protected:
  // One ocloc build for the suite: the programs directory an installed AOT
  // slice would hold for arc-a380 (acm-g11) and iris-xe (tgllp).
  static void SetUpTestSuite()
  {
    const aot::AotTargetSpec targets[] = {testing::k_arc_a380, testing::k_iris_xe};
    const std::vector<aot::KernelVariant> variants = {{std::string(k_source_name), std::string(k_options)}};
    const EmbeddedFile sources[] = {{k_source_name, k_source}};
    s_store.emplace(testing::SuiteAotStore::build("test_only_aot_loader-", targets, variants, sources));
    if (s_store->skip_reason().empty()) {
      s_compiler = s_store->compiler();
    }
  }
  static void TearDownTestSuite() { s_store.reset(); }
  static fs::path programs_dir() { return s_store->programs(); }

  void SetUp() override
  {
    if (!s_store->skip_reason().empty()) {
      GTEST_SKIP() << s_store->skip_reason();
    }
    auto dir = TempDir::create("test_only_aot_loader_store-");
    ASSERT_TRUE(dir);
    scratch.emplace(std::move(*dir));
    auto devices = opencl::enumerate_devices();
    if (!devices) {
      GTEST_SKIP() << "no OpenCL device: " << devices.error().message();
    }
    device = devices->front();
    cl_int status = CL_SUCCESS;
    context = opencl::UniqueContext(clCreateContext(nullptr, 1, &device.device, nullptr, nullptr, &status));
    ASSERT_EQ(status, CL_SUCCESS);
    queue = opencl::UniqueQueue(clCreateCommandQueue(context.get(), device.device, 0, &status));
    ASSERT_EQ(status, CL_SUCCESS);
    auto programs = level_zero::AotPrograms::open(programs_dir());
    ASSERT_TRUE(programs) << programs.error().message();
    ASSERT_EQ(programs->targets().size(), 2u);
    aot.emplace(std::move(*programs));
  }

  // The PoCL device presented as an Arc A380 running the NEO release that
  // made the binaries: what selection sees on a real A380 host. Only the
  // identity is changed; the cl_device_id is still PoCL's.
  opencl::DeviceRef as_a380(std::string_view driver) const
  {
    opencl::DeviceRef a380 = device;
    a380.properties.insert_or_assign(std::string(prop::vendor), "intel");
    a380.properties.insert_or_assign(std::string(prop::pci_id), "0x56a5");
    a380.properties.insert_or_assign(std::string(prop::opencl_driver), std::string(driver));
    a380.properties.erase(std::string(prop::intel_driver));
    return a380;
  }

  // scale() over 64 floats; the expected values depend on the -DOFFSET the
  // program was built with, so a build without the options fails here.
  void run_and_check(cl_program program)
  {
    cl_int status = CL_SUCCESS;
    opencl::UniqueKernel kernel(clCreateKernel(program, "scale", &status));
    ASSERT_EQ(status, CL_SUCCESS);
    std::vector<float> host(64);
    for (std::size_t i = 0; i < host.size(); ++i) {
      host[i] = static_cast<float>(i);
    }
    opencl::UniqueMem buffer(clCreateBuffer(context.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                            host.size() * sizeof(float), host.data(), &status));
    ASSERT_EQ(status, CL_SUCCESS);
    cl_mem mem = buffer.get();
    const float factor = 3.0f;
    ASSERT_EQ(clSetKernelArg(kernel.get(), 0, sizeof mem, &mem), CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(kernel.get(), 1, sizeof factor, &factor), CL_SUCCESS);
    const std::size_t global = host.size();
    ASSERT_EQ(clEnqueueNDRangeKernel(queue.get(), kernel.get(), 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
    ASSERT_EQ(clEnqueueReadBuffer(queue.get(), mem, CL_TRUE, 0, host.size() * sizeof(float), host.data(), 0, nullptr,
                                  nullptr),
              CL_SUCCESS);
    for (std::size_t i = 0; i < host.size(); ++i) {
      ASSERT_EQ(host[i], static_cast<float>(i) * 3.0f + 1.5f) << i;
    }
  }

  static inline std::optional<testing::SuiteAotStore> s_store;
  static inline std::string s_compiler;

  std::optional<TempDir> scratch; // this test's program store
  opencl::DeviceRef device;
  opencl::UniqueContext context;
  opencl::UniqueQueue queue;
  std::optional<level_zero::AotPrograms> aot;
};

TEST_F(AotLoaderTest, PciId56a5SelectsAcmG11WithTheDriverFromOpenClDriverVersion)
{
  const auto a380 = as_a380(s_compiler);
  const auto properties = aot_device_properties(a380);
  ASSERT_TRUE(properties.contains(prop::intel_driver));
  EXPECT_EQ(properties.at(std::string(prop::intel_driver)), s_compiler);
  const auto selection = aot->select(properties);
  ASSERT_NE(selection.target, nullptr) << selection.reason;
  EXPECT_EQ(selection.target->ocloc_device, "acm-g11");

  // And Iris Xe's id selects tgllp from the same directory.
  auto iris = a380;
  iris.properties.insert_or_assign(std::string(prop::pci_id), "0x9a49");
  const auto iris_selection = aot->select(aot_device_properties(iris));
  ASSERT_NE(iris_selection.target, nullptr) << iris_selection.reason;
  EXPECT_EQ(iris_selection.target->ocloc_device, "tgllp");
}

TEST_F(AotLoaderTest, NonIntelDeviceIsRefusedWithAReasonAndTheStoreBuildRuns)
{
  // The PoCL device as it reports itself (vendor cpu).
  const auto vendor = device.properties.find(prop::vendor);
  ASSERT_NE(vendor, device.properties.end());
  ASSERT_NE(vendor->second, "intel") << "this test expects a non-Intel device (PoCL)";
  auto load = load_aot_program(context.get(), device, *aot, k_source, k_options);
  EXPECT_FALSE(load.served());
  EXPECT_TRUE(load.target.empty());
  EXPECT_NE(load.reason.find("device vendor is " + vendor->second), std::string::npos) << load.reason;
  EXPECT_EQ(load.summary().rfind("fallback: ", 0), 0u) << load.summary();

  auto store = ProgramStore::open(scratch->path() / "store", StoreMode::read_only);
  ASSERT_TRUE(store);
  auto built = store->build_program(context.get(), device, k_source, k_options);
  ASSERT_TRUE(built) << built.error().message();
  run_and_check(built->program.get());
}

TEST_F(AotLoaderTest, RealZebinIsRejectedByPoclAndTheFallbackBuildsFromSourceAndRuns)
{
  const auto a380 = as_a380(s_compiler);
  auto load = load_aot_program(context.get(), a380, *aot, k_source, k_options);
  // Selection and lookup succeed: the failure is the driver's.
  EXPECT_EQ(load.target, "acm-g11");
  EXPECT_EQ(load.key.size(), 64u) << load.reason;
  ASSERT_FALSE(load.served()) << "PoCL built an acm-g11 zebin: " << load.summary();
  std::cout << "[ fallback ] " << load.summary() << "\n"; // what a run report shows
  EXPECT_NE(load.reason.find("acm-g11"), std::string::npos) << load.reason;
  EXPECT_NE(load.reason.find(load.key.substr(0, 12)), std::string::npos) << load.reason;
  EXPECT_NE(load.reason.find("CL_"), std::string::npos) << "no driver status in: " << load.reason;

  // The same zebin straight into the binary-load step: rejected, not a crash.
  const auto selection = aot->select(aot_device_properties(a380));
  ASSERT_NE(selection.target, nullptr);
  auto lookup = aot->find(*selection.target, k_source, k_options);
  ASSERT_TRUE(lookup.program) << lookup.reason;
  ASSERT_GT(lookup.program->zebin.size(), 64u);
  EXPECT_EQ(lookup.program->zebin.substr(0, 4), "\x7f" "ELF");
  auto direct = build_from_aot_binary(context.get(), device.device, lookup.program->zebin, k_options);
  EXPECT_FALSE(direct);

  // The fallback: the program store builds from source, and it computes.
  auto store = ProgramStore::open(scratch->path() / "store", StoreMode::read_write);
  ASSERT_TRUE(store);
  auto built = store->build_program(context.get(), a380, k_source, k_options);
  ASSERT_TRUE(built) << built.error().message();
  EXPECT_EQ(built->outcome, Outcome::miss);
  run_and_check(built->program.get());
}

TEST_F(AotLoaderTest, EveryOtherMismatchIsAReasonNeverAProgram)
{
  // Driver differs from the compiler that made the zebins.
  auto other_driver = load_aot_program(context.get(), as_a380("1.0.0"), *aot, k_source, k_options);
  EXPECT_FALSE(other_driver.served());
  EXPECT_NE(other_driver.reason.find("driver is 1.0.0"), std::string::npos) << other_driver.reason;

  // A device no target lists.
  auto b580 = as_a380(s_compiler);
  b580.properties.insert_or_assign(std::string(prop::pci_id), "0xe20b");
  auto no_target = load_aot_program(context.get(), b580, *aot, k_source, k_options);
  EXPECT_FALSE(no_target.served());
  EXPECT_NE(no_target.reason.find("no AOT target lists pci-id 0xe20b"), std::string::npos) << no_target.reason;

  // Options the build did not compile: no entry.
  auto no_entry = load_aot_program(context.get(), as_a380(s_compiler), *aot, k_source, "-DOFFSET=2.5f");
  EXPECT_FALSE(no_entry.served());
  EXPECT_EQ(no_entry.target, "acm-g11");
  EXPECT_TRUE(no_entry.key.empty());
  EXPECT_NE(no_entry.reason.find("no AOT program"), std::string::npos) << no_entry.reason;

  // Garbage where the zebin was (the meta still matches): the driver's rejection.
  const auto selection = aot->select(aot_device_properties(as_a380(s_compiler)));
  ASSERT_NE(selection.target, nullptr);
  const auto key = level_zero::AotProgramKey::for_target(*selection.target, k_source, k_options).digest();
  const auto zebin_path = selection.target->dir / (key + ".zebin");
  auto original = read_file(zebin_path.string());
  ASSERT_TRUE(original);
  ASSERT_TRUE(write_file_atomic(zebin_path, "test_only not a binary"));
  auto garbage = load_aot_program(context.get(), as_a380(s_compiler), *aot, k_source, k_options);
  ASSERT_TRUE(write_file_atomic(zebin_path, *original));
  EXPECT_FALSE(garbage.served());
  EXPECT_EQ(garbage.key, key);
  EXPECT_NE(garbage.reason.find("CL_"), std::string::npos) << garbage.reason;
}

} // namespace
} // namespace prewarm::store
