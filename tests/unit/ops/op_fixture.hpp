// SPDX-License-Identifier: Apache-2.0
// Shared fixture for the op tests: one Session on the real OpenCL device (PoCL
// here) for the whole binary, a fresh random seed per test (printed, and
// PREWARM_TEST_SEED repeats it), and helpers that move float tensors in an
// op's storage format. No OpenCL device at all => every device test skips.
#pragma once

#include "engine/ops/device_tensor.hpp"
#include "engine/ops/precision.hpp"
#include "engine/ops/tolerance.hpp"
#include "engine/session.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace prewarm::engine::ops::testing {

enum class Format { fp32, fp16, bf16 };

// The op tests run in every storage format: INSTANTIATE_TEST_SUITE_P(Ops, T, every_format(), format_name).
inline auto
every_format()
{
  return ::testing::Values(Format::fp32, Format::fp16, Format::bf16);
}
std::string format_name(const ::testing::TestParamInfo<Format>& info);

// fp32; fp16 = half storage, half compute where `session`'s device has cl_khr_fp16; bf16.
FloatFormat format_on(Format format, const Session& session);

// The forward-pass tests run at every model precision (engine::k_precisions).
inline auto
every_precision()
{
  return ::testing::ValuesIn(k_precisions);
}
std::string precision_name(const ::testing::TestParamInfo<Precision>& info);

// Unwraps a Result in a test; an error becomes a test failure (gtest reports
// the exception with the error's message).
template<typename T>
T
must(Result<T> result)
{
  if (!result) {
    throw std::runtime_error(result.error().code() + ": " + result.error().message());
  }
  return std::move(*result);
}

inline void
must(Status status)
{
  if (!status) {
    throw std::runtime_error(status.error().code() + ": " + status.error().message());
  }
}

class OpTest : public ::testing::Test
{
protected:
  void SetUp() override;

  Session& session() { return *m_session; }
  std::mt19937& rng() { return m_rng; }

  std::vector<float> random(std::size_t n, float low = -1.0f, float high = 1.0f);
  // Random values as the device will see them in `storage` (rounded through half or bf16).
  std::vector<float> random_in(Storage storage, std::size_t n, float low = -1.0f, float high = 1.0f);
  std::vector<std::int32_t> random_ints(std::size_t n, std::int32_t low, std::int32_t high);

  DeviceBuffer upload(std::span<const float> values, Storage storage);
  template<typename T>
  DeviceBuffer upload_raw(std::span<const T> values)
  {
    return must(ops::upload_raw(session(), values));
  }
  DeviceBuffer allocate(std::size_t bytes);
  std::vector<float> download(const DeviceBuffer& buffer, std::size_t count, Storage storage);

  // Expects got ~ want within `tolerance`, printing the comparison.
  void expect_close(std::string_view what, std::span<const float> got, std::span<const float> want,
                    Tolerance tolerance);

private:
  Session* m_session = nullptr;
  std::mt19937 m_rng;
};

// Parameterised over fp32 / fp16 / bf16 (format_on).
class OpFormatTest
  : public OpTest
  , public ::testing::WithParamInterface<Format>
{
protected:
  FloatFormat format();
  Storage storage() { return format().storage; }
};

} // namespace prewarm::engine::ops::testing
