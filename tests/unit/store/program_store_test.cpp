// SPDX-License-Identifier: Apache-2.0
// The program store on the real PoCL device: miss -> run -> capture -> hit,
// and every way a stored binary can be unusable falls back to a source build.
#include "base/digest.hpp"
#include "base/files.hpp"
#include "opencl/program.hpp"
#include "opencl/check.hpp"
#include "opencl/device.hpp"
#include "store/program_store.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace prewarm::store {
namespace {

constexpr std::string_view k_source = R"(
__kernel void scale(__global float* x, const float factor) {
  const int i = get_global_id(0);
  x[i] = x[i] * factor + OFFSET;
}
)";
constexpr std::string_view k_options = "-DOFFSET=1.0f";

class ProgramStoreTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = TempDir::create("prewarm-store-test-");
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
  }

  std::filesystem::path store_dir() const { return scratch->path() / "store"; }

  // Runs `scale` over 64 floats (local size 16) and checks the result, which
  // also makes PoCL compile the kernel for that local size.
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
    const float factor = 2.0f;
    ASSERT_EQ(clSetKernelArg(kernel.get(), 0, sizeof mem, &mem), CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(kernel.get(), 1, sizeof factor, &factor), CL_SUCCESS);
    const std::size_t global = host.size();
    const std::size_t local = 16;
    ASSERT_EQ(clEnqueueNDRangeKernel(queue.get(), kernel.get(), 1, nullptr, &global, &local, 0, nullptr, nullptr), CL_SUCCESS);
    ASSERT_EQ(clEnqueueReadBuffer(queue.get(), mem, CL_TRUE, 0, host.size() * sizeof(float), host.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    for (std::size_t i = 0; i < host.size(); ++i) {
      ASSERT_EQ(host[i], static_cast<float>(i) * 2.0f + 1.0f) << i;
    }
  }

  // A store filled with one captured program; returns its key.
  std::string fill_store()
  {
    auto store = ProgramStore::open(store_dir(), StoreMode::read_write);
    EXPECT_TRUE(store);
    auto built = store->build_program(context.get(), device, k_source, k_options);
    EXPECT_TRUE(built) << built.error().message();
    EXPECT_EQ(built->outcome, Outcome::miss);
    run_and_check(built->program.get());
    EXPECT_TRUE(store->capture(built->program.get()));
    EXPECT_EQ(store->counters().captured, 1u);
    return built->key;
  }

  std::optional<TempDir> scratch;
  opencl::DeviceRef device;
  opencl::UniqueContext context;
  opencl::UniqueQueue queue;
};

TEST_F(ProgramStoreTest, MissRunCaptureThenHitInAFreshStore)
{
  const auto key = fill_store();
  ASSERT_TRUE(std::filesystem::exists(store_dir() / key.substr(0, 2) / (key + ".bin")));
  const auto meta = read_file((store_dir() / key.substr(0, 2) / (key + ".meta")).string());
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->rfind(ProgramKey::for_device(device, k_source, k_options).canonical_text(), 0), 0u);
  EXPECT_NE(meta->find("\nbinary-sha256 "), std::string::npos);

  auto store = ProgramStore::open(store_dir(), StoreMode::read_only);
  ASSERT_TRUE(store);
  auto built = store->build_program(context.get(), device, k_source, k_options);
  ASSERT_TRUE(built) << built.error().message();
  EXPECT_EQ(built->outcome, Outcome::hit) << built->reason;
  EXPECT_EQ(built->key, key);
  run_and_check(built->program.get());
  EXPECT_EQ(store->counters().hits, 1u);
  EXPECT_EQ(store->counters().misses, 0u);
}

TEST_F(ProgramStoreTest, OtherOptionsAreAMiss)
{
  fill_store();
  auto store = ProgramStore::open(store_dir(), StoreMode::read_only);
  ASSERT_TRUE(store);
  auto built = store->build_program(context.get(), device, k_source, "-DOFFSET=1.0f -cl-mad-enable");
  ASSERT_TRUE(built);
  EXPECT_EQ(built->outcome, Outcome::miss);
  run_and_check(built->program.get());
}

TEST_F(ProgramStoreTest, CorruptBinaryIsRejectedAndTheSourceBuildRuns)
{
  const auto key = fill_store();
  const auto bin = store_dir() / key.substr(0, 2) / (key + ".bin");
  auto bytes = read_file(bin.string());
  ASSERT_TRUE(bytes);
  (*bytes)[bytes->size() / 2] ^= 0x5a;
  ASSERT_TRUE(write_file_atomic(bin, *bytes));

  auto store = ProgramStore::open(store_dir(), StoreMode::read_only);
  ASSERT_TRUE(store);
  auto built = store->build_program(context.get(), device, k_source, k_options);
  ASSERT_TRUE(built) << built.error().message();
  EXPECT_EQ(built->outcome, Outcome::rejected);
  EXPECT_NE(built->reason.find("SHA-256"), std::string::npos) << built->reason;
  EXPECT_EQ(store->counters().rejected, 1u);
  run_and_check(built->program.get());
}

TEST_F(ProgramStoreTest, BinaryTheDriverRefusesIsRejectedAndTheSourceBuildRuns)
{
  // Digest-consistent garbage: passes the store's checks, fails in the driver.
  const auto key = fill_store();
  const std::string garbage = "this is not a program binary";
  const auto pkey = ProgramKey::for_device(device, k_source, k_options);
  ASSERT_TRUE(write_file_atomic(store_dir() / key.substr(0, 2) / (key + ".bin"), garbage));
  ASSERT_TRUE(write_file_atomic(store_dir() / key.substr(0, 2) / (key + ".meta"),
                                pkey.canonical_text() + "binary-sha256 " + sha256_hex(garbage) + "\n"));

  auto store = ProgramStore::open(store_dir(), StoreMode::read_only);
  ASSERT_TRUE(store);
  auto built = store->build_program(context.get(), device, k_source, k_options);
  ASSERT_TRUE(built) << built.error().message();
  EXPECT_EQ(built->outcome, Outcome::rejected);
  EXPECT_NE(built->reason.find("clCreateProgramWithBinary"), std::string::npos) << built->reason;
  run_and_check(built->program.get());
}

TEST_F(ProgramStoreTest, MetaThatDoesNotMatchIsRejected)
{
  const auto key = fill_store();
  const auto meta_path = store_dir() / key.substr(0, 2) / (key + ".meta");
  auto meta = read_file(meta_path.string());
  ASSERT_TRUE(meta);
  const auto at = meta->find("driver ");
  ASSERT_NE(at, std::string::npos);
  meta->insert(at + 7, "0.0-other ");
  ASSERT_TRUE(write_file_atomic(meta_path, *meta));

  auto store = ProgramStore::open(store_dir(), StoreMode::read_only);
  ASSERT_TRUE(store);
  auto built = store->build_program(context.get(), device, k_source, k_options);
  ASSERT_TRUE(built);
  EXPECT_EQ(built->outcome, Outcome::rejected);
  EXPECT_NE(built->reason.find("key text differs"), std::string::npos) << built->reason;
  run_and_check(built->program.get());
}

TEST_F(ProgramStoreTest, ReadOnlyStoreWritesNothing)
{
  auto store = ProgramStore::open(store_dir(), StoreMode::read_only);
  ASSERT_TRUE(store);
  auto built = store->build_program(context.get(), device, k_source, k_options);
  ASSERT_TRUE(built);
  run_and_check(built->program.get());
  EXPECT_TRUE(store->capture_all());
  EXPECT_EQ(store->counters().captured, 0u);
  EXPECT_FALSE(std::filesystem::exists(store_dir()));
}

TEST_F(ProgramStoreTest, SourceBuildFailureIsAnErrorWithTheLog)
{
  auto store = ProgramStore::open(store_dir(), StoreMode::read_write);
  ASSERT_TRUE(store);
  auto built = store->build_program(context.get(), device, "__kernel void k() { nope_undeclared(); }", "");
  ASSERT_FALSE(built);
  EXPECT_EQ(built.error().code(), "E_OPENCL_BUILD");
  EXPECT_NE(built.error().message().find("nope_undeclared"), std::string::npos);
}

// PoCL compiles per-local-size code at the first enqueue; a binary captured
// after the run must carry it, so it is larger than one captured at build.
// Two programs with distinct options (never built in this cache dir before,
// or PoCL's own cache would already hold the code): PoCL serializes a
// program's binary once, at the first query, so one program cannot show both.
TEST_F(ProgramStoreTest, CaptureAfterTheRunHoldsMoreThanCaptureAtBuild)
{
  if (device.properties.find("opencl.platform")->second != "Portable Computing Language") {
    GTEST_SKIP() << "PoCL-specific";
  }
  auto store = ProgramStore::open(store_dir(), StoreMode::read_write);
  ASSERT_TRUE(store);
  const auto unique = store_dir().parent_path().filename().string();
  auto early = store->build_program(context.get(), device, k_source, std::string(k_options) + " -DEARLY=" + unique);
  ASSERT_TRUE(early);
  const auto early_binary = opencl::program_binary(early->program.get());
  ASSERT_TRUE(early_binary);
  run_and_check(early->program.get());

  auto late = store->build_program(context.get(), device, k_source, std::string(k_options) + " -DLATE=" + unique);
  ASSERT_TRUE(late);
  run_and_check(late->program.get());
  const auto late_binary = opencl::program_binary(late->program.get());
  ASSERT_TRUE(late_binary);
  EXPECT_GT(late_binary->size(), early_binary->size());
}

} // namespace
} // namespace prewarm::store
