// SPDX-License-Identifier: Apache-2.0
#include "engine/models/decoder_forward.hpp"

#include "engine/ops/attention.hpp"
#include "engine/ops/device_tensor.hpp"
#include "engine/ops/elementwise.hpp"
#include "engine/ops/embedding.hpp"
#include "engine/models/forward_programs.hpp"
#include "engine/ops/layer_norm.hpp"
#include "engine/ops/linear.hpp"
#include "engine/ops/rope.hpp"
#include "engine/ops/w8a8.hpp"
#include "engine/ops/uniform_values.hpp"
#include "engine/row_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <random>

namespace prewarm::engine::models {

// The ops this forward pass is built of.
using namespace ops;

namespace {

// A device tensor and the host copy of exactly what the device holds.
struct Tensor
{
  DeviceBuffer device;
  std::vector<float> host;
};

struct LayerWeights
{
  std::optional<Linear> q, k, v, o, gate, up, down;
  Tensor norm1_gamma, norm1_beta, norm2_gamma, norm2_beta;
};

class DecoderRun
{
public:
  DecoderRun(Session& session, const DecoderArchitecture& arch, Precision precision,
             const DecoderForwardOptions& options)
    : m_session(session), m_arch(arch), m_precision(precision), m_options(options),
      m_format(FloatFormat::for_precision(precision, session)), m_rng(options.seed)
  {
  }

  Result<ForwardSummary> run();

private:
  std::size_t hidden() const { return static_cast<std::size_t>(m_arch.hidden); }
  std::size_t heads() const { return static_cast<std::size_t>(m_arch.heads); }
  std::size_t kv_heads() const { return static_cast<std::size_t>(m_arch.kv_heads); }
  std::size_t head_dim() const { return static_cast<std::size_t>(m_arch.head_dim); }
  Storage storage() const { return m_format.storage; }

  Result<Tensor> upload_tensor(std::vector<float> values)
  {
    Tensor t;
    t.host = round_to_storage(values, storage());
    PW_ASSIGN(t.device, upload(m_session, t.host, storage()));
    return t;
  }
  Result<Tensor> empty_tensor(std::size_t count)
  {
    Tensor t;
    PW_ASSIGN(t.device, m_session.allocate(count * m_format.element_bytes()));
    t.host.assign(count, 0.0f);
    return t;
  }
  // Downloads `t` and checks it against `want`.
  Status settle(std::string_view what, Tensor& t, const std::vector<float>& want, Tolerance tolerance)
  {
    PW_ASSIGN(t.host, download(m_session, t.device, want.size(), storage()));
    return m_checker.check(what, t.host, want, tolerance);
  }
  Result<Linear> make_linear(std::size_t out, std::size_t in)
  {
    const float bound = std::sqrt(3.0f / static_cast<float>(in));
    return Linear::load(m_session, m_precision, out, in, uniform_values(m_rng, out * in, -bound, bound));
  }

  Status load_weights();
  Status linear(std::string_view what, Linear& layer, Phase phase, std::size_t rows, const Tensor& x, Tensor& y);
  Status norm(std::string_view what, std::size_t rows, const Tensor& x, const Tensor& gamma, const Tensor& beta,
              Tensor& out);
  Status embed(std::string_view what, const std::vector<std::int32_t>& ids, Tensor& out);
  Status residual(std::string_view what, std::size_t count, Tensor& x, const Tensor& delta);
  // One layer over `rows` = batch * tokens rows at positions past .. past + tokens - 1.
  Status layer(std::size_t index, Phase phase, std::size_t tokens, std::size_t past, Tensor& x);
  // Final norm + LM head; returns the argmax token of each sequence's last row.
  Result<std::vector<std::int32_t>> head(std::string_view what, Phase phase, std::size_t tokens, const Tensor& x);

  Session& m_session;
  const DecoderArchitecture& m_arch;
  Precision m_precision;
  DecoderForwardOptions m_options;
  FloatFormat m_format;
  std::mt19937 m_rng;
  ForwardChecker m_checker;

  std::size_t m_vocab = 0;
  std::size_t m_max_seq = 0;
  Tensor m_table; // float embedding table (fp32/fp16)
  QuantizedRows m_table_int8;
  DeviceBuffer m_table_int8_device, m_table_scales_device;
  LayerWeights m_weights;
  Tensor m_final_gamma, m_final_beta;
  std::optional<Linear> m_lm_head;
  DeviceBuffer m_inv_freq;
  std::vector<float> m_inv_freq_host;
  std::vector<Tensor> m_k_cache, m_v_cache; // per layer
};

Status
DecoderRun::load_weights()
{
  const std::size_t h = hidden();
  const std::size_t ffn = static_cast<std::size_t>(m_arch.ffn);
  const std::vector<float> table = uniform_values(m_rng, m_vocab * h, -1, 1);
  if (m_precision == Precision::int8) {
    m_table_int8 = quantize_rows(m_vocab, h, table);
    PW_ASSIGN(m_table_int8_device, upload_raw(m_session, std::span<const std::int8_t>(m_table_int8.values)));
    PW_ASSIGN(m_table_scales_device, upload(m_session, m_table_int8.scales, Storage::fp32));
  } else {
    PW_ASSIGN(m_table, upload_tensor(table));
  }
  PW_ASSIGN(m_weights.q, make_linear(heads() * head_dim(), h));
  PW_ASSIGN(m_weights.k, make_linear(kv_heads() * head_dim(), h));
  PW_ASSIGN(m_weights.v, make_linear(kv_heads() * head_dim(), h));
  PW_ASSIGN(m_weights.o, make_linear(h, heads() * head_dim()));
  if (m_arch.activation == DecoderArchitecture::Activation::silu) {
    PW_ASSIGN(m_weights.gate, make_linear(ffn, h));
  }
  PW_ASSIGN(m_weights.up, make_linear(ffn, h));
  PW_ASSIGN(m_weights.down, make_linear(h, ffn));
  PW_ASSIGN(m_weights.norm1_gamma, upload_tensor(uniform_values(m_rng, h, 0.8f, 1.2f)));
  PW_ASSIGN(m_weights.norm1_beta, upload_tensor(uniform_values(m_rng, h, -0.1f, 0.1f)));
  PW_ASSIGN(m_weights.norm2_gamma, upload_tensor(uniform_values(m_rng, h, 0.8f, 1.2f)));
  PW_ASSIGN(m_weights.norm2_beta, upload_tensor(uniform_values(m_rng, h, -0.1f, 0.1f)));
  PW_ASSIGN(m_final_gamma, upload_tensor(uniform_values(m_rng, h, 0.8f, 1.2f)));
  PW_ASSIGN(m_final_beta, upload_tensor(uniform_values(m_rng, h, -0.1f, 0.1f)));
  PW_ASSIGN(m_lm_head, make_linear(m_vocab, h));
  m_inv_freq_host = Rope::inverse_frequencies(head_dim(), m_arch.rope_theta);
  PW_ASSIGN(m_inv_freq, upload(m_session, m_inv_freq_host, Storage::fp32));
  const std::size_t cache = m_options.batch * m_max_seq * kv_heads() * head_dim();
  for (std::size_t i = 0; i < m_options.layers; ++i) {
    PW_ASSIGN(Tensor k, empty_tensor(cache));
    PW_ASSIGN(Tensor v, empty_tensor(cache));
    // Zero the caches so that the host copies describe them.
    PW_TRY(m_session.write(k.device, std::span<const std::byte>(std::vector<std::byte>(k.device.bytes()))));
    PW_TRY(m_session.write(v.device, std::span<const std::byte>(std::vector<std::byte>(v.device.bytes()))));
    m_k_cache.push_back(std::move(k));
    m_v_cache.push_back(std::move(v));
  }
  return {};
}

Status
DecoderRun::linear(std::string_view what, Linear& layer, Phase phase, std::size_t rows, const Tensor& x, Tensor& y)
{
  PW_TRY_CTX(what, layer.run(m_session, phase, rows, x.device, y.device));
  return settle(what, y, layer.reference(rows, x.host), layer.tolerance());
}

Status
DecoderRun::norm(std::string_view what, std::size_t rows, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                 Tensor& out)
{
  const std::size_t h = hidden();
  const auto eps = static_cast<float>(m_arch.norm_eps);
  if (m_arch.norm == DecoderArchitecture::Norm::layernorm) {
    const LayerNorm::Shape shape{rows, h};
    PW_TRY_CTX(what, LayerNorm(m_format).run(m_session, shape, x.device, gamma.device, beta.device, out.device, eps));
    return settle(what, out, LayerNorm::reference(shape, x.host, gamma.host, beta.host, eps), tolerance_for(m_format));
  }
  const RmsNormArgs args{.x = &x.device, .weight = &gamma.device, .out = &out.device, .rows = static_cast<int>(rows),
                         .cols = static_cast<int>(h), .eps = eps};
  Defines precision;
  add_precision_defines(precision, m_format);
  PW_TRY_CTX(what, run_rmsnorm(m_session, args, precision, rmsnorm_work_group));
  std::vector<float> want(rows * h);
  reference_rmsnorm(args, x.host.data(), gamma.host.data(), want.data());
  return settle(what, out, want, tolerance_for(m_format));
}

Status
DecoderRun::embed(std::string_view what, const std::vector<std::int32_t>& ids, Tensor& out)
{
  const EmbeddingGather::Shape shape{.tokens = ids.size(), .hidden = hidden(), .vocab = m_vocab};
  PW_ASSIGN(DeviceBuffer device_ids, upload_raw(m_session, std::span<const std::int32_t>(ids)));
  if (m_precision == Precision::int8) {
    PW_TRY_CTX(what, EmbeddingGather(m_format, TableFormat::int8)
                       .run(m_session, shape, ids, device_ids, m_table_int8_device, &m_table_scales_device, out.device));
    const std::vector<float> widened(m_table_int8.values.begin(), m_table_int8.values.end());
    return settle(what, out, EmbeddingGather::reference(shape, ids, widened, m_table_int8.scales),
                  tolerance_for(m_format));
  }
  PW_TRY_CTX(what, EmbeddingGather(m_format, TableFormat::float_rows)
                     .run(m_session, shape, ids, device_ids, m_table.device, nullptr, out.device));
  return settle(what, out, EmbeddingGather::reference(shape, ids, m_table.host), {0, 0});
}

Status
DecoderRun::residual(std::string_view what, std::size_t count, Tensor& x, const Tensor& delta)
{
  PW_TRY_CTX(what, ResidualAdd(m_format).run(m_session, count, x.device, delta.device, x.device));
  return settle(what, x, ResidualAdd::reference(x.host, delta.host), tolerance_for(m_format));
}

Status
DecoderRun::layer(std::size_t index, Phase phase, std::size_t tokens, std::size_t past, Tensor& x)
{
  const std::size_t rows = m_options.batch * tokens;
  const std::size_t h = hidden();
  const std::size_t q_width = heads() * head_dim();
  const std::size_t kv_width = kv_heads() * head_dim();
  const std::string where = fmt::format("layer {} {} (past {})", index, phase == Phase::prefill ? "prefill" : "decode", past);
  const auto name = [&](std::string_view op) { return fmt::format("{}: {}", where, op); };

  PW_ASSIGN(Tensor normed, empty_tensor(rows * h));
  PW_TRY(norm(name("norm"), rows, x, m_weights.norm1_gamma, m_weights.norm1_beta, normed));
  PW_ASSIGN(Tensor q, empty_tensor(rows * q_width));
  PW_ASSIGN(Tensor k, empty_tensor(rows * kv_width));
  PW_ASSIGN(Tensor v, empty_tensor(rows * kv_width));
  PW_TRY(linear(name("q"), *m_weights.q, phase, rows, normed, q));
  PW_TRY(linear(name("k"), *m_weights.k, phase, rows, normed, k));
  PW_TRY(linear(name("v"), *m_weights.v, phase, rows, normed, v));

  // Rows are [batch][tokens]: row b * tokens + t sits at position past + t.
  std::vector<std::int32_t> positions(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    positions[r] = static_cast<std::int32_t>(past + r % tokens);
  }
  PW_ASSIGN(DeviceBuffer device_positions, upload_raw(m_session, std::span<const std::int32_t>(positions)));
  const Rope rope(m_format);
  for (auto [tensor, count, label] : {std::tuple{&q, heads(), "rope q"}, std::tuple{&k, kv_heads(), "rope k"}}) {
    const Rope::Shape shape{.tokens = rows, .heads = count, .head_dim = head_dim()};
    PW_TRY_CTX(name(label), rope.run(m_session, shape, tensor->device, device_positions, m_inv_freq));
    PW_TRY(settle(name(label), *tensor, Rope::reference(shape, tensor->host, positions, m_inv_freq_host),
                  tolerance_for(m_format)));
  }

  const AttentionShape shape{.batch = m_options.batch, .heads = heads(), .kv_heads = kv_heads(),
                             .head_dim = head_dim(), .max_seq = m_max_seq};
  const KvCacheWrite cache_write(m_format, head_dim());
  Tensor& k_cache = m_k_cache[index];
  Tensor& v_cache = m_v_cache[index];
  for (auto [source, cache, label] : {std::tuple{&k, &k_cache, "kv_cache_write k"}, std::tuple{&v, &v_cache, "kv_cache_write v"}}) {
    PW_TRY_CTX(name(label), cache_write.run(m_session, shape, tokens, past, source->device, cache->device));
    std::vector<float> want = cache->host;
    KvCacheWrite::reference(shape, tokens, past, source->host, want);
    PW_TRY(settle(name(label), *cache, want, {0, 0}));
  }

  PW_ASSIGN(Tensor attended, empty_tensor(rows * q_width));
  if (phase == Phase::prefill) {
    PW_TRY_CTX(name("attention"), PrefillAttention(m_format, head_dim())
                                    .run(m_session, shape, tokens, past, q.device, k_cache.device, v_cache.device,
                                         attended.device));
  } else {
    PW_TRY_CTX(name("attention"), DecodeAttention(m_format, head_dim())
                                    .run(m_session, shape, past + 1, q.device, k_cache.device, v_cache.device,
                                         attended.device));
  }
  PW_TRY(settle(name("attention"), attended,
                attention_reference(shape, tokens, past, q.host, k_cache.host, v_cache.host), tolerance_for(m_format)));

  PW_ASSIGN(Tensor projected, empty_tensor(rows * h));
  PW_TRY(linear(name("o"), *m_weights.o, phase, rows, attended, projected));
  PW_TRY(residual(name("residual 1"), rows * h, x, projected));

  PW_TRY(norm(name("post-attention norm"), rows, x, m_weights.norm2_gamma, m_weights.norm2_beta, normed));
  const std::size_t ffn = static_cast<std::size_t>(m_arch.ffn);
  PW_ASSIGN(Tensor up, empty_tensor(rows * ffn));
  PW_ASSIGN(Tensor activated, empty_tensor(rows * ffn));
  PW_TRY(linear(name("up"), *m_weights.up, phase, rows, normed, up));
  if (m_arch.activation == DecoderArchitecture::Activation::silu) {
    PW_ASSIGN(Tensor gate, empty_tensor(rows * ffn));
    PW_TRY(linear(name("gate"), *m_weights.gate, phase, rows, normed, gate));
    PW_TRY_CTX(name("silu_mul"), SiluMul(m_format).run(m_session, rows * ffn, gate.device, up.device, activated.device));
    PW_TRY(settle(name("silu_mul"), activated, SiluMul::reference(gate.host, up.host), tolerance_for(m_format)));
  } else {
    PW_TRY_CTX(name("gelu"), Gelu(m_format).run(m_session, rows * ffn, up.device, activated.device));
    PW_TRY(settle(name("gelu"), activated, Gelu::reference(up.host), tolerance_for(m_format)));
  }
  PW_TRY(linear(name("down"), *m_weights.down, phase, rows, activated, projected));
  return residual(name("residual 2"), rows * h, x, projected);
}

Result<std::vector<std::int32_t>>
DecoderRun::head(std::string_view what, Phase phase, std::size_t tokens, const Tensor& x)
{
  const std::size_t rows = m_options.batch * tokens;
  PW_ASSIGN(Tensor normed, empty_tensor(rows * hidden()));
  PW_TRY(norm(fmt::format("{}: final norm", what), rows, x, m_final_gamma, m_final_beta, normed));
  PW_ASSIGN(Tensor logits, empty_tensor(rows * m_vocab));
  PW_TRY(linear(fmt::format("{}: lm head", what), *m_lm_head, phase, rows, normed, logits));
  std::vector<std::int32_t> next(m_options.batch);
  for (std::size_t b = 0; b < m_options.batch; ++b) {
    const auto row = logits.host.begin() + static_cast<std::ptrdiff_t>(((b + 1) * tokens - 1) * m_vocab);
    next[b] = static_cast<std::int32_t>(std::max_element(row, row + static_cast<std::ptrdiff_t>(m_vocab)) - row);
  }
  return next;
}

Result<ForwardSummary>
DecoderRun::run()
{
  if (m_arch.hidden <= 0 || m_arch.heads <= 0 || m_arch.kv_heads <= 0 || m_arch.head_dim <= 0 || m_arch.ffn <= 0 ||
      m_arch.vocab <= 0 || m_arch.heads % m_arch.kv_heads != 0 || m_arch.head_dim % 2 != 0) {
    return fail(Errc::usage, fmt::format("decoder: hidden {}, heads {}, kv_heads {}, head_dim {}, ffn {}, vocab {}: "
                                         "all must be positive, kv_heads must divide heads, head_dim must be even",
                                         m_arch.hidden, m_arch.heads, m_arch.kv_heads, m_arch.head_dim, m_arch.ffn,
                                         m_arch.vocab));
  }
  if (m_options.batch == 0 || m_options.prefill == 0 || m_options.layers == 0) {
    return fail(Errc::usage, "decoder: batch, prefill length and layers must be positive");
  }
  m_vocab = static_cast<std::size_t>(m_arch.vocab);
  if (m_options.max_vocab > 0) {
    m_vocab = std::min(m_vocab, m_options.max_vocab);
  }
  m_max_seq = m_options.prefill + m_options.decode_steps;
  PW_TRY(load_weights());

  // Prefill: random prompts.
  std::uniform_int_distribution<std::int32_t> token(0, static_cast<std::int32_t>(m_vocab) - 1);
  std::vector<std::int32_t> ids(m_options.batch * m_options.prefill);
  for (auto& id : ids) {
    id = token(m_rng);
  }
  const std::size_t h = hidden();
  PW_ASSIGN(Tensor x, empty_tensor(ids.size() * h));
  PW_TRY(embed("prefill: embedding", ids, x));
  for (std::size_t i = 0; i < m_options.layers; ++i) {
    PW_TRY(layer(i, Phase::prefill, m_options.prefill, 0, x));
  }
  PW_ASSIGN(std::vector<std::int32_t> next, head("prefill", Phase::prefill, m_options.prefill, x));

  // Decode: greedy, one token per sequence per step.
  for (std::size_t step = 0; step < m_options.decode_steps; ++step) {
    const std::size_t past = m_options.prefill + step;
    PW_ASSIGN(Tensor token_x, empty_tensor(m_options.batch * h));
    PW_TRY(embed(fmt::format("decode step {}: embedding", step), next, token_x));
    for (std::size_t i = 0; i < m_options.layers; ++i) {
      PW_TRY(layer(i, Phase::decode, 1, past, token_x));
    }
    PW_ASSIGN(next, head(fmt::format("decode step {}", step), Phase::decode, 1, token_x));
  }
  return m_checker.summary();
}

} // namespace

Result<ForwardSummary>
run_decoder_forward(Session& session, const DecoderArchitecture& architecture, Precision precision,
                    const DecoderForwardOptions& options)
{
  DecoderRun run(session, architecture, precision, options);
  return run.run();
}

} // namespace prewarm::engine::models
