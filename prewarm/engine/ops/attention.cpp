// SPDX-License-Identifier: Apache-2.0
#include "engine/ops/attention.hpp"

#include "engine/ops/device_tensor.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace prewarm::engine::ops {

namespace {

Status
check_attention_shape(std::string_view op, const AttentionShape& shape, std::size_t head_dim)
{
  PW_TRY(require_shape(op, shape.batch > 0 && shape.heads > 0 && shape.kv_heads > 0 && shape.max_seq > 0,
                       "batch, heads, kv_heads and max_seq must be positive"));
  PW_TRY(require_shape(op, shape.heads % shape.kv_heads == 0, "kv_heads must divide heads"));
  return require_shape(op, shape.head_dim == head_dim,
                       fmt::format("head_dim {} but the op was specialised for {}", shape.head_dim, head_dim));
}

std::size_t
cache_bytes(const AttentionShape& shape, FloatFormat format)
{
  return shape.batch * shape.max_seq * shape.kv_heads * shape.head_dim * format.element_bytes();
}

float
softmax_scale(std::size_t head_dim)
{
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

} // namespace

Defines
attention_defines(FloatFormat format, const AttentionConfig& config)
{
  Defines defines;
  add_precision_defines(defines, format);
  defines.set("HEAD_DIM", static_cast<std::int64_t>(config.head_dim));
  defines.set("BLOCK_Q", static_cast<std::int64_t>(config.block_q));
  defines.set("BLOCK_KV", static_cast<std::int64_t>(config.block_kv));
  defines.set("DECODE_LOCAL", static_cast<std::int64_t>(config.decode_local));
  return defines;
}

KvCacheWrite::KvCacheWrite(FloatFormat format, AttentionConfig config) : m_format(format), m_config(config) {}

Defines
KvCacheWrite::defines() const
{
  return attention_defines(m_format, m_config);
}

LaunchGeometry
KvCacheWrite::geometry(const AttentionShape& shape, std::size_t tokens) const
{
  return LaunchGeometry::grid({m_config.head_dim, shape.kv_heads * tokens, shape.batch}, {0, 0, 0});
}

Status
KvCacheWrite::run(Session& session, const AttentionShape& shape, std::size_t tokens, std::size_t past,
                  const DeviceBuffer& src, const DeviceBuffer& cache) const
{
  constexpr std::string_view op = "kv_cache_write";
  PW_TRY(check_attention_shape(op, shape, m_config.head_dim));
  PW_TRY(require_shape(op, tokens > 0 && past + tokens <= shape.max_seq, "past + tokens exceeds max_seq"));
  PW_TRY(require_bytes(op, "src", src, shape.batch * tokens * shape.kv_heads * m_config.head_dim * m_format.element_bytes()));
  PW_TRY(require_bytes(op, "cache", cache, cache_bytes(shape, m_format)));
  PW_ASSIGN(Kernel kernel, session.kernel("attention.cl", "kv_cache_write", defines()));
  return session.launch(kernel, geometry(shape, tokens),
                        KernelArgs().buffer(src).buffer(cache)
                          .value(static_cast<cl_uint>(tokens)).value(static_cast<cl_uint>(shape.kv_heads))
                          .value(static_cast<cl_uint>(past)).value(static_cast<cl_uint>(shape.max_seq)));
}

void
KvCacheWrite::reference(const AttentionShape& shape, std::size_t tokens, std::size_t past,
                        std::span<const float> src, std::span<float> cache)
{
  const std::size_t row = shape.kv_heads * shape.head_dim; // one token's keys
  for (std::size_t b = 0; b < shape.batch; ++b) {
    for (std::size_t t = 0; t < tokens; ++t) {
      std::copy_n(src.begin() + static_cast<std::ptrdiff_t>((b * tokens + t) * row), row,
                  cache.begin() + static_cast<std::ptrdiff_t>((b * shape.max_seq + past + t) * row));
    }
  }
}

PrefillAttention::PrefillAttention(FloatFormat format, AttentionConfig config) : m_format(format), m_config(config) {}

Defines
PrefillAttention::defines() const
{
  return attention_defines(m_format, m_config);
}

LaunchGeometry
PrefillAttention::geometry(const AttentionShape& shape, std::size_t tokens) const
{
  return LaunchGeometry::grid({round_up(tokens, m_config.block_q), shape.heads, shape.batch}, {m_config.block_q, 1, 1});
}

Status
PrefillAttention::run(Session& session, const AttentionShape& shape, std::size_t tokens, std::size_t past,
                      const DeviceBuffer& q, const DeviceBuffer& k_cache, const DeviceBuffer& v_cache,
                      const DeviceBuffer& out) const
{
  constexpr std::string_view op = "attention_prefill";
  PW_TRY(check_attention_shape(op, shape, m_config.head_dim));
  PW_TRY(require_shape(op, tokens > 0 && past + tokens <= shape.max_seq, "past + tokens exceeds max_seq"));
  const std::size_t q_bytes = shape.batch * tokens * shape.heads * m_config.head_dim * m_format.element_bytes();
  PW_TRY(require_bytes(op, "q", q, q_bytes));
  PW_TRY(require_bytes(op, "k_cache", k_cache, cache_bytes(shape, m_format)));
  PW_TRY(require_bytes(op, "v_cache", v_cache, cache_bytes(shape, m_format)));
  PW_TRY(require_bytes(op, "out", out, q_bytes));
  PW_ASSIGN(Kernel kernel, session.kernel("attention.cl", "attention_prefill", defines()));
  return session.launch(kernel, geometry(shape, tokens),
                        KernelArgs().buffer(q).buffer(k_cache).buffer(v_cache).buffer(out)
                          .value(static_cast<cl_uint>(tokens)).value(static_cast<cl_uint>(shape.heads))
                          .value(static_cast<cl_uint>(shape.kv_heads)).value(static_cast<cl_uint>(past))
                          .value(static_cast<cl_uint>(shape.max_seq)).value(softmax_scale(m_config.head_dim)));
}

DecodeAttention::DecodeAttention(FloatFormat format, AttentionConfig config) : m_format(format), m_config(config) {}

Defines
DecodeAttention::defines() const
{
  return attention_defines(m_format, m_config);
}

LaunchGeometry
DecodeAttention::geometry(const AttentionShape& shape) const
{
  return LaunchGeometry::grid(m_config.decode_local * shape.heads, shape.batch, m_config.decode_local, 1);
}

Status
DecodeAttention::run(Session& session, const AttentionShape& shape, std::size_t seq_len,
                     const DeviceBuffer& q, const DeviceBuffer& k_cache, const DeviceBuffer& v_cache,
                     const DeviceBuffer& out) const
{
  constexpr std::string_view op = "attention_decode";
  PW_TRY(check_attention_shape(op, shape, m_config.head_dim));
  PW_TRY(require_shape(op, seq_len > 0 && seq_len <= shape.max_seq, "seq_len must be in 1 .. max_seq"));
  const std::size_t q_bytes = shape.batch * shape.heads * m_config.head_dim * m_format.element_bytes();
  PW_TRY(require_bytes(op, "q", q, q_bytes));
  PW_TRY(require_bytes(op, "k_cache", k_cache, cache_bytes(shape, m_format)));
  PW_TRY(require_bytes(op, "v_cache", v_cache, cache_bytes(shape, m_format)));
  PW_TRY(require_bytes(op, "out", out, q_bytes));
  PW_ASSIGN(Kernel kernel, session.kernel("attention.cl", "attention_decode", defines()));
  return session.launch(kernel, geometry(shape),
                        KernelArgs().buffer(q).buffer(k_cache).buffer(v_cache).buffer(out)
                          .value(static_cast<cl_uint>(shape.heads)).value(static_cast<cl_uint>(shape.kv_heads))
                          .value(static_cast<cl_uint>(seq_len)).value(static_cast<cl_uint>(shape.max_seq))
                          .value(softmax_scale(m_config.head_dim)));
}

std::vector<float>
attention_reference(const AttentionShape& shape, std::size_t tokens, std::size_t past,
                    std::span<const float> q, std::span<const float> k_cache, std::span<const float> v_cache)
{
  const std::size_t d_size = shape.head_dim;
  const std::size_t group = shape.heads / shape.kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_size));
  std::vector<float> out(shape.batch * tokens * shape.heads * d_size);
  std::vector<double> scores;
  for (std::size_t b = 0; b < shape.batch; ++b) {
    for (std::size_t t = 0; t < tokens; ++t) {
      const std::size_t keys = past + t + 1;
      for (std::size_t h = 0; h < shape.heads; ++h) {
        const std::size_t kv_head = h / group;
        const float* q_row = q.data() + ((b * tokens + t) * shape.heads + h) * d_size;
        scores.assign(keys, 0.0);
        double peak = -INFINITY;
        for (std::size_t j = 0; j < keys; ++j) {
          const float* k_row = k_cache.data() + ((b * shape.max_seq + j) * shape.kv_heads + kv_head) * d_size;
          double s = 0;
          for (std::size_t d = 0; d < d_size; ++d) {
            s += static_cast<double>(q_row[d]) * static_cast<double>(k_row[d]);
          }
          scores[j] = s * scale;
          peak = std::max(peak, scores[j]);
        }
        double total = 0;
        for (double& s : scores) {
          s = std::exp(s - peak);
          total += s;
        }
        float* o_row = out.data() + ((b * tokens + t) * shape.heads + h) * d_size;
        for (std::size_t d = 0; d < d_size; ++d) {
          double v = 0;
          for (std::size_t j = 0; j < keys; ++j) {
            v += scores[j] * static_cast<double>(
                               v_cache[((b * shape.max_seq + j) * shape.kv_heads + kv_head) * d_size + d]);
          }
          o_row[d] = static_cast<float>(v / total);
        }
      }
    }
  }
  return out;
}

} // namespace prewarm::engine::ops
