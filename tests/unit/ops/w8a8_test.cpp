// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/w8a8.hpp"
#include "op_fixture.hpp"

#include <cstdlib>

namespace prewarm::engine::ops::testing {
namespace {

class W8A8Test : public OpFormatTest
{
protected:
  struct Device
  {
    DeviceBuffer q;
    DeviceBuffer scales;
  };

  // Runs quantize_per_token on the device and checks it against the host rule.
  Device quantize_on_device(std::size_t rows, std::size_t cols, std::span<const float> x)
  {
    Device d{allocate(rows * cols), allocate(rows * sizeof(float))};
    must(QuantizePerToken(format()).run(session(), rows, cols, upload(x, storage()), d.q, d.scales));
    std::vector<std::int8_t> q(rows * cols);
    std::vector<float> scales(rows);
    must(session().read(d.q, std::span<std::int8_t>(q)));
    must(session().read(d.scales, std::span<float>(scales)));
    const QuantizedRows want = quantize_rows(rows, cols, x);
    std::size_t off_by_one = 0;
    for (std::size_t i = 0; i < q.size(); ++i) {
      const int diff = std::abs(int{q[i]} - int{want.values[i]});
      EXPECT_LE(diff, 1) << "element " << i;
      off_by_one += diff == 1 ? 1 : 0;
    }
    // One step apart only where the device's 127/max rounds differently: rare.
    EXPECT_LE(off_by_one, q.size() / 100) << off_by_one << " activations one step apart";
    for (std::size_t r = 0; r < rows; ++r) {
      EXPECT_FLOAT_EQ(scales[r], want.scales[r]) << "row " << r;
    }
    return d;
  }
};

TEST_P(W8A8Test, QuantizePerTokenMatchesTheHostRule)
{
  const std::size_t rows = 6;
  const std::size_t cols = 300;
  auto x = random_in(storage(), rows * cols, -3, 3);
  std::fill(x.begin() + cols, x.begin() + 2 * cols, 0.0f); // an all-zero row: scale 1, q 0
  quantize_on_device(rows, cols, x);
}

TEST_P(W8A8Test, PrefillGemmOnEdgeTiles)
{
  // 19 x 37 outputs, K = 300: no dimension a multiple of the 16 x 16 tile.
  const LinearShape shape{.rows = 19, .out = 37, .in = 300};
  const auto x = random_in(storage(), shape.rows * shape.in, -2, 2);
  const auto w = random(shape.out * shape.in, -0.2f, 0.2f);
  const QuantizedRows wq = quantize_weights_per_channel(shape.out, shape.in, w);
  const Device a = quantize_on_device(shape.rows, shape.in, x);
  const auto y = allocate(shape.rows * shape.out * format().element_bytes());
  must(W8A8Gemm(format()).run(session(), shape, a.q, a.scales, upload_raw(std::span<const std::int8_t>(wq.values)),
                              upload(wq.scales, Storage::fp32), y));
  const auto got = download(y, shape.rows * shape.out, storage());
  expect_close("w8a8_gemm", got, w8a8_reference(shape, quantize_rows(shape.rows, shape.in, x), wq),
               tolerance_for(format(), Quantization::w8a8));
  // And the int8 product approximates the float layer (scales applied right).
  expect_close("w8a8_gemm vs float", got, linear_reference(shape, x, w), {3e-2, 0});
}

TEST_P(W8A8Test, DecodeGemv)
{
  const LinearShape shape{.rows = 2, .out = 50, .in = 333};
  const auto x = random_in(storage(), shape.rows * shape.in, -2, 2);
  const auto w = random(shape.out * shape.in, -0.2f, 0.2f);
  const QuantizedRows wq = quantize_weights_per_channel(shape.out, shape.in, w);
  const Device a = quantize_on_device(shape.rows, shape.in, x);
  const auto y = allocate(shape.rows * shape.out * format().element_bytes());
  must(W8A8Gemv(format()).run(session(), shape, a.q, a.scales, upload_raw(std::span<const std::int8_t>(wq.values)),
                              upload(wq.scales, Storage::fp32), y));
  const auto got = download(y, shape.rows * shape.out, storage());
  expect_close("w8a8_gemv", got, w8a8_reference(shape, quantize_rows(shape.rows, shape.in, x), wq),
               tolerance_for(format(), Quantization::w8a8));
  expect_close("w8a8_gemv vs float", got, linear_reference(shape, x, w), {3e-2, 0});
}

INSTANTIATE_TEST_SUITE_P(Ops, W8A8Test, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
