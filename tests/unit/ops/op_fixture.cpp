// SPDX-License-Identifier: Apache-2.0
#include "op_fixture.hpp"

#include "opencl/device.hpp"

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

namespace prewarm::engine::ops::testing {

namespace {

struct SharedSession
{
  std::unique_ptr<Session> session;
  std::string unavailable; // why there is none
};

SharedSession&
shared_session()
{
  static SharedSession shared = [] {
    SharedSession s;
    auto devices = opencl::enumerate_devices();
    if (!devices || devices->empty()) {
      s.unavailable = devices ? "no OpenCL device" : devices.error().message();
      return s;
    }
    auto opened = Session::open({});
    if (!opened) {
      // A device exists but the session does not open: a real failure, not a skip.
      throw std::runtime_error("Session::open failed: " + opened.error().message());
    }
    s.session = std::make_unique<Session>(std::move(*opened));
    std::cout << "[ device ] " << s.session->device().description
              << (s.session->has_fp16() ? " (cl_khr_fp16: half compute)" : " (no cl_khr_fp16: half storage, float compute)")
              << "\n";
    return s;
  }();
  return shared;
}

} // namespace

std::string
format_name(const ::testing::TestParamInfo<Format>& info)
{
  switch (info.param) {
  case Format::fp32:
    return "fp32";
  case Format::fp16:
    return "fp16";
  case Format::bf16:
    break;
  }
  return "bf16";
}

FloatFormat
format_on(Format format, const Session& session)
{
  switch (format) {
  case Format::fp32:
    return FloatFormat::fp32();
  case Format::fp16:
    return FloatFormat::fp16_for(session);
  case Format::bf16:
    break;
  }
  return FloatFormat::bf16();
}

std::string
precision_name(const ::testing::TestParamInfo<Precision>& info)
{
  return std::string(to_string(info.param));
}

void
OpTest::SetUp()
{
  SharedSession& shared = shared_session();
  if (!shared.session) {
    GTEST_SKIP() << "no OpenCL device to run ops on (" << shared.unavailable
                 << "; install pocl-opencl-icd for the CPU device)";
  }
  m_session = shared.session.get();
  std::uint32_t seed = std::random_device{}();
  if (const char* fixed = std::getenv("PREWARM_TEST_SEED")) {
    seed = static_cast<std::uint32_t>(std::strtoul(fixed, nullptr, 10));
  }
  m_rng.seed(seed);
  std::cout << "[ seed   ] " << seed << " (PREWARM_TEST_SEED=" << seed << " repeats this test's inputs)\n";
  RecordProperty("seed", std::to_string(seed));
}

std::vector<float>
OpTest::random(std::size_t n, float low, float high)
{
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> out(n);
  for (float& v : out) {
    v = dist(m_rng);
  }
  return out;
}

std::vector<float>
OpTest::random_in(Storage storage, std::size_t n, float low, float high)
{
  const std::vector<float> values = random(n, low, high);
  return round_to_storage(values, storage);
}

std::vector<std::int32_t>
OpTest::random_ints(std::size_t n, std::int32_t low, std::int32_t high)
{
  std::uniform_int_distribution<std::int32_t> dist(low, high);
  std::vector<std::int32_t> out(n);
  for (auto& v : out) {
    v = dist(m_rng);
  }
  return out;
}

DeviceBuffer
OpTest::upload(std::span<const float> values, Storage storage)
{
  return must(ops::upload(session(), values, storage));
}

DeviceBuffer
OpTest::allocate(std::size_t bytes)
{
  return must(session().allocate(bytes));
}

std::vector<float>
OpTest::download(const DeviceBuffer& buffer, std::size_t count, Storage storage)
{
  return must(ops::download(session(), buffer, count, storage));
}

void
OpTest::expect_close(std::string_view what, std::span<const float> got, std::span<const float> want,
                     Tolerance tolerance)
{
  const Comparison c = compare(got, want, tolerance);
  std::cout << "[ check  ] " << what << ": " << c.summary() << "\n";
  const Status status = check_close(what, got, want, tolerance);
  EXPECT_TRUE(status.has_value()) << status.error().message();
}

FloatFormat
OpFormatTest::format()
{
  return format_on(GetParam(), session());
}

} // namespace prewarm::engine::ops::testing
