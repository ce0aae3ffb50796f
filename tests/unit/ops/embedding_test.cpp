// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/embedding.hpp"
#include "engine/ops/w8a8.hpp"
#include "op_fixture.hpp"

namespace prewarm::engine::ops::testing {
namespace {

class EmbeddingTest : public OpFormatTest
{};

TEST_P(EmbeddingTest, FloatTableGather)
{
  const EmbeddingGather::Shape shape{.tokens = 9, .hidden = 100, .vocab = 50};
  const auto table = random_in(storage(), shape.vocab * shape.hidden);
  auto ids = random_ints(shape.tokens, 0, static_cast<std::int32_t>(shape.vocab) - 1);
  ids[0] = 0;
  ids[1] = static_cast<std::int32_t>(shape.vocab) - 1; // both ends of the table
  const auto out = allocate(shape.tokens * shape.hidden * format().element_bytes());
  must(EmbeddingGather(format(), TableFormat::float_rows)
         .run(session(), shape, ids, upload_raw(std::span<const std::int32_t>(ids)), upload(table, storage()),
              nullptr, out));
  // A gather copies: exact in every format.
  expect_close("embedding", download(out, shape.tokens * shape.hidden, storage()),
               EmbeddingGather::reference(shape, ids, table), {0, 0});
}

TEST_P(EmbeddingTest, Int8TableWithRowScales)
{
  const EmbeddingGather::Shape shape{.tokens = 6, .hidden = 72, .vocab = 30};
  const QuantizedRows q = quantize_rows(shape.vocab, shape.hidden, random(shape.vocab * shape.hidden, -2, 2));
  const std::vector<float> widened(q.values.begin(), q.values.end());
  const auto ids = random_ints(shape.tokens, 0, static_cast<std::int32_t>(shape.vocab) - 1);
  const auto scales = upload(q.scales, Storage::fp32);
  const auto out = allocate(shape.tokens * shape.hidden * format().element_bytes());
  must(EmbeddingGather(format(), TableFormat::int8)
         .run(session(), shape, ids, upload_raw(std::span<const std::int32_t>(ids)),
              upload_raw(std::span<const std::int8_t>(q.values)), &scales, out));
  expect_close("embedding int8", download(out, shape.tokens * shape.hidden, storage()),
               EmbeddingGather::reference(shape, ids, widened, q.scales), tolerance_for(format()));
}

TEST_P(EmbeddingTest, IdOutsideTheVocabularyIsRejected)
{
  const EmbeddingGather::Shape shape{.tokens = 2, .hidden = 8, .vocab = 10};
  const std::vector<std::int32_t> ids{3, 10};
  const auto buffer = allocate(4096);
  const Status status = EmbeddingGather(format(), TableFormat::float_rows)
                          .run(session(), shape, ids, buffer, buffer, nullptr, buffer);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), "E_OP_ARGUMENT");
  EXPECT_NE(status.error().message().find("id 10"), std::string::npos) << status.error().message();
}

INSTANTIATE_TEST_SUITE_P(Ops, EmbeddingTest, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
