// SPDX-License-Identifier: Apache-2.0
// Attention over a KV cache with grouped-query heads (kernels/attention.cl).
// Layouts (row-major, innermost last):
//   q, out (prefill)   [batch][tokens][heads][head_dim]
//   q, out (decode)    [batch][heads][head_dim]          (one new token per sequence)
//   k/v cache          [batch][max_seq][kv_heads][head_dim]
//   new k/v            [batch][tokens][kv_heads][head_dim]
// KvCacheWrite appends a step's keys/values at position `past`; PrefillAttention
// runs causal attention for `tokens` queries at positions past .. past+tokens-1;
// DecodeAttention attends one query per sequence to `seq_len` cached keys.
// Specialisations (AttentionConfig): -DHEAD_DIM (private arrays), prefill -DBLOCK_Q/-DBLOCK_KV
// (16/16: two 16 x head_dim float tiles = 16 KiB of local memory at head_dim 128,
// within every device's 32-48 KiB), decode -DDECODE_LOCAL=32 (keys split 32 ways).
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "engine/ops/precision.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace prewarm::engine::ops {

// The specialisation of attention.cl. All three attention ops compile the file
// with the full set, so a model builds attention.cl once per head size, not
// three times.
struct AttentionConfig
{
  std::size_t head_dim = 0;
  std::size_t block_q = 16;      // prefill: queries per work-group (its local size)
  std::size_t block_kv = 16;     // prefill: keys per local-memory tile
  std::size_t decode_local = 32; // decode: work-items splitting the keys (power of two)
};

Defines attention_defines(FloatFormat format, const AttentionConfig& config);

struct AttentionShape
{
  std::size_t batch = 1;
  std::size_t heads = 0;
  std::size_t kv_heads = 0; // divides heads
  std::size_t head_dim = 0;
  std::size_t max_seq = 0;  // cache capacity per sequence
};

class KvCacheWrite
{
public:
  KvCacheWrite(FloatFormat format, AttentionConfig config);
  KvCacheWrite(FloatFormat format, std::size_t head_dim) : KvCacheWrite(format, AttentionConfig{.head_dim = head_dim}) {}
  Defines defines() const;
  LaunchGeometry geometry(const AttentionShape& shape, std::size_t tokens) const;
  // cache[b][past + t] = src[b][t] for t < tokens
  Status run(Session& session, const AttentionShape& shape, std::size_t tokens, std::size_t past,
             const DeviceBuffer& src, const DeviceBuffer& cache) const;
  static void reference(const AttentionShape& shape, std::size_t tokens, std::size_t past,
                        std::span<const float> src, std::span<float> cache);

private:
  FloatFormat m_format;
  AttentionConfig m_config;
};

class PrefillAttention
{
public:
  PrefillAttention(FloatFormat format, AttentionConfig config);
  PrefillAttention(FloatFormat format, std::size_t head_dim)
    : PrefillAttention(format, AttentionConfig{.head_dim = head_dim})
  {
  }
  Defines defines() const;
  LaunchGeometry geometry(const AttentionShape& shape, std::size_t tokens) const;
  // Keys/values 0 .. past + tokens - 1 must be in the caches already.
  Status run(Session& session, const AttentionShape& shape, std::size_t tokens, std::size_t past,
             const DeviceBuffer& q, const DeviceBuffer& k_cache, const DeviceBuffer& v_cache,
             const DeviceBuffer& out) const;

private:
  FloatFormat m_format;
  AttentionConfig m_config;
};

class DecodeAttention
{
public:
  DecodeAttention(FloatFormat format, AttentionConfig config);
  DecodeAttention(FloatFormat format, std::size_t head_dim) : DecodeAttention(format, AttentionConfig{.head_dim = head_dim}) {}
  Defines defines() const;
  LaunchGeometry geometry(const AttentionShape& shape) const;
  // seq_len >= 1 keys (the new token's included) per sequence.
  Status run(Session& session, const AttentionShape& shape, std::size_t seq_len, const DeviceBuffer& q,
             const DeviceBuffer& k_cache, const DeviceBuffer& v_cache, const DeviceBuffer& out) const;

private:
  FloatFormat m_format;
  AttentionConfig m_config;
};

// Plain softmax(q k^T / sqrt(head_dim)) v in double, causal: query t (position
// past + t) sees keys 0 .. past + t. Decode is tokens = 1, past = seq_len - 1,
// with q/out laid out [batch][1][heads][head_dim] = [batch][heads][head_dim].
std::vector<float> attention_reference(const AttentionShape& shape, std::size_t tokens, std::size_t past,
                                       std::span<const float> q, std::span<const float> k_cache,
                                       std::span<const float> v_cache);

} // namespace prewarm::engine::ops
