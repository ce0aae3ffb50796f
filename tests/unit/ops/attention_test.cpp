// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/attention.hpp"
#include "op_fixture.hpp"

namespace prewarm::engine::ops::testing {
namespace {

class AttentionTest : public OpFormatTest
{};

std::size_t
cache_elements(const AttentionShape& shape)
{
  return shape.batch * shape.max_seq * shape.kv_heads * shape.head_dim;
}

TEST_P(AttentionTest, CacheWriteThenCausalPrefillWithGroupedHeads)
{
  // 19 tokens: one full and one partial block of 16 queries; past 5 keys already cached.
  const AttentionShape shape{.batch = 2, .heads = 4, .kv_heads = 2, .head_dim = 32, .max_seq = 40};
  const std::size_t tokens = 19;
  const std::size_t past = 5;
  auto k_cache = random_in(storage(), cache_elements(shape));
  auto v_cache = random_in(storage(), cache_elements(shape));
  const std::size_t step = shape.batch * tokens * shape.kv_heads * shape.head_dim;
  const auto k_new = random_in(storage(), step);
  const auto v_new = random_in(storage(), step);
  const auto q = random_in(storage(), shape.batch * tokens * shape.heads * shape.head_dim, -3, 3);

  const auto dk = upload(k_cache, storage());
  const auto dv = upload(v_cache, storage());
  const KvCacheWrite write(format(), shape.head_dim);
  must(write.run(session(), shape, tokens, past, upload(k_new, storage()), dk));
  must(write.run(session(), shape, tokens, past, upload(v_new, storage()), dv));
  KvCacheWrite::reference(shape, tokens, past, k_new, k_cache);
  KvCacheWrite::reference(shape, tokens, past, v_new, v_cache);
  expect_close("kv_cache_write", download(dk, k_cache.size(), storage()), k_cache, {0, 0});

  const auto out = allocate(q.size() * format().element_bytes());
  must(PrefillAttention(format(), shape.head_dim).run(session(), shape, tokens, past, upload(q, storage()), dk, dv, out));
  expect_close("attention_prefill", download(out, q.size(), storage()),
               attention_reference(shape, tokens, past, q, k_cache, v_cache), tolerance_for(format()));
}

TEST_P(AttentionTest, PrefillFromAnEmptyCacheWithOneQueryPerKvHead)
{
  const AttentionShape shape{.batch = 1, .heads = 2, .kv_heads = 2, .head_dim = 64, .max_seq = 8};
  const std::size_t tokens = 8;
  const auto k_cache = random_in(storage(), cache_elements(shape));
  const auto v_cache = random_in(storage(), cache_elements(shape));
  const auto q = random_in(storage(), tokens * shape.heads * shape.head_dim, -3, 3);
  const auto out = allocate(q.size() * format().element_bytes());
  must(PrefillAttention(format(), AttentionConfig{.head_dim = shape.head_dim, .block_q = 4, .block_kv = 8})
         .run(session(), shape, tokens, 0, upload(q, storage()), upload(k_cache, storage()),
              upload(v_cache, storage()), out));
  const auto got = download(out, q.size(), storage());
  const auto want = attention_reference(shape, tokens, 0, q, k_cache, v_cache);
  expect_close("attention_prefill past=0", got, want, tolerance_for(format()));
  // Query 0 sees only key 0: its output is value row 0 exactly (up to storage rounding).
  for (std::size_t d = 0; d < shape.head_dim; ++d) {
    EXPECT_NEAR(got[d], v_cache[d], 1e-6 + 1e-3 * (format().storage == Storage::fp16));
  }
}

TEST_P(AttentionTest, DecodeOverACacheLongerAndShorterThanTheWorkGroup)
{
  // Multi-query (one kv head); seq_len 37 > 32 work-items, seq_len 3 leaves 29 without keys.
  const AttentionShape shape{.batch = 2, .heads = 4, .kv_heads = 1, .head_dim = 64, .max_seq = 50};
  const auto k_cache = random_in(storage(), cache_elements(shape));
  const auto v_cache = random_in(storage(), cache_elements(shape));
  const auto dk = upload(k_cache, storage());
  const auto dv = upload(v_cache, storage());
  for (const std::size_t seq_len : {37u, 3u, 50u}) {
    const auto q = random_in(storage(), shape.batch * shape.heads * shape.head_dim, -3, 3);
    const auto out = allocate(q.size() * format().element_bytes());
    must(DecodeAttention(format(), shape.head_dim).run(session(), shape, seq_len, upload(q, storage()), dk, dv, out));
    expect_close("attention_decode seq_len=" + std::to_string(seq_len), download(out, q.size(), storage()),
                 attention_reference(shape, 1, seq_len - 1, q, k_cache, v_cache), tolerance_for(format()));
  }
}

TEST_P(AttentionTest, HeadDimOtherThanTheSpecialisationIsRejected)
{
  const AttentionShape shape{.batch = 1, .heads = 2, .kv_heads = 1, .head_dim = 128, .max_seq = 4};
  const auto buffer = allocate(1 << 16);
  const Status status = DecodeAttention(format(), 64).run(session(), shape, 2, buffer, buffer, buffer, buffer);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), "E_OP_ARGUMENT");
}

INSTANTIATE_TEST_SUITE_P(Ops, AttentionTest, every_format(), format_name);

} // namespace
} // namespace prewarm::engine::ops::testing
