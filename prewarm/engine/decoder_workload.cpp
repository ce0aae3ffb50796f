// SPDX-License-Identifier: Apache-2.0
#include "engine/decoder_workload.hpp"

#include "base/log.hpp"
#include "engine/gemm.hpp"
#include "engine/row_kernels.hpp"
#include "engine/seeded_random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

namespace prewarm::engine {
namespace {

using Clock = std::chrono::steady_clock;

// fp32 tolerance for a whole layer: each element passes when
// |got - want| <= abs * peak + rel * |want|, peak = max(1, max |want|).
// Float sums in another order over K up to ~20k stay near 1e-5; 1e-3 leaves
// room for long chains (full coverage) and still catches any wrong index.
constexpr double k_fp32_abs = 1e-3;
constexpr double k_fp32_rel = 1e-3;
constexpr int k_gemm_tile = 16;
constexpr int k_row_work_group = 64;
constexpr int k_elementwise_local = 64;

struct Shape
{
  int hidden, heads, kv_heads, head_dim, ffn;
  int q_dim() const { return heads * head_dim; }
  int kv_dim() const { return kv_heads * head_dim; }
};

struct HostWeights
{
  std::vector<float> attn_norm, wq, wk, wv, wo, ffn_norm, wg, wu, wd;
};

struct DeviceWeights
{
  DeviceBuffer attn_norm, wq, wk, wv, wo, ffn_norm, wg, wu, wd;
};

HostWeights
make_weights(const Shape& s, SeededRandom& random)
{
  const auto h = static_cast<std::size_t>(s.hidden);
  const auto scale = [](int fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); };
  HostWeights w;
  w.attn_norm = random.around(h, 1.0f, 0.1f);
  w.wq = random.uniform(static_cast<std::size_t>(s.q_dim()) * h, scale(s.hidden));
  w.wk = random.uniform(static_cast<std::size_t>(s.kv_dim()) * h, scale(s.hidden));
  w.wv = random.uniform(static_cast<std::size_t>(s.kv_dim()) * h, scale(s.hidden));
  w.wo = random.uniform(h * static_cast<std::size_t>(s.q_dim()), scale(s.q_dim()));
  w.ffn_norm = random.around(h, 1.0f, 0.1f);
  w.wg = random.uniform(static_cast<std::size_t>(s.ffn) * h, scale(s.hidden));
  w.wu = random.uniform(static_cast<std::size_t>(s.ffn) * h, scale(s.hidden));
  w.wd = random.uniform(h * static_cast<std::size_t>(s.ffn), scale(s.ffn));
  return w;
}

Result<DeviceBuffer>
upload(Session& session, std::span<const float> values)
{
  PW_ASSIGN(auto buffer, session.allocate(values.size_bytes()));
  PW_TRY(session.write(buffer, values));
  return buffer;
}

Result<DeviceWeights>
upload_weights(Session& session, const HostWeights& w)
{
  DeviceWeights d;
  PW_ASSIGN(d.attn_norm, upload(session, w.attn_norm));
  PW_ASSIGN(d.wq, upload(session, w.wq));
  PW_ASSIGN(d.wk, upload(session, w.wk));
  PW_ASSIGN(d.wv, upload(session, w.wv));
  PW_ASSIGN(d.wo, upload(session, w.wo));
  PW_ASSIGN(d.ffn_norm, upload(session, w.ffn_norm));
  PW_ASSIGN(d.wg, upload(session, w.wg));
  PW_ASSIGN(d.wu, upload(session, w.wu));
  PW_ASSIGN(d.wd, upload(session, w.wd));
  return d;
}

// Activations for up to `rows` tokens of `batch` sequences.
struct DeviceActivations
{
  DeviceBuffer x, h, q, scores, attn, x1, h2, g, u, a, y;
};

Result<DeviceActivations>
allocate_activations(Session& session, const Shape& s, int rows, int max_context)
{
  const auto f = sizeof(float);
  const auto r = static_cast<std::size_t>(rows);
  DeviceActivations d;
  PW_ASSIGN(d.x, session.allocate(r * s.hidden * f));
  PW_ASSIGN(d.h, session.allocate(r * s.hidden * f));
  PW_ASSIGN(d.q, session.allocate(r * s.q_dim() * f));
  PW_ASSIGN(d.scores, session.allocate(static_cast<std::size_t>(s.heads) * r * max_context * f));
  PW_ASSIGN(d.attn, session.allocate(r * s.q_dim() * f));
  PW_ASSIGN(d.x1, session.allocate(r * s.hidden * f));
  PW_ASSIGN(d.h2, session.allocate(r * s.hidden * f));
  PW_ASSIGN(d.g, session.allocate(r * s.ffn * f));
  PW_ASSIGN(d.u, session.allocate(r * s.ffn * f));
  PW_ASSIGN(d.a, session.allocate(r * s.ffn * f));
  PW_ASSIGN(d.y, session.allocate(r * s.hidden * f));
  return d;
}

// The same tensors on the host, for the reference.
struct HostActivations
{
  std::vector<float> h, q, scores, attn, x1, h2, g, u, a;
};

// One forward step of `tokens` new tokens per sequence after `past` cached
// ones. The GEMM descriptions are shared by the device run and the reference,
// so both compute exactly the same thing.
struct Step
{
  Shape s;
  int batch = 1;
  int tokens = 1;
  int past = 0;
  int max_context = 1; // KV cache rows per sequence
  float eps = 1e-6f;

  int rows() const { return batch * tokens; }
  int context() const { return past + tokens; }

  GemmArgs linear(const DeviceBuffer* in, int in_features, const DeviceBuffer* weight, int out_features,
                  const DeviceBuffer* out, const DeviceBuffer* residual = nullptr) const
  {
    GemmArgs g;
    g.m = rows();
    g.n = out_features;
    g.k = in_features;
    g.a = {in, 0, in_features, 0};
    g.b = {weight, 0, in_features, 0};
    g.c = {out, 0, out_features, 0};
    g.residual = residual;
    return g;
  }

  // K or V for all sequences, written into the cache after `past` rows.
  GemmArgs cache_write(const DeviceBuffer* h, const DeviceBuffer* weight, const DeviceBuffer* cache) const
  {
    GemmArgs g;
    g.batches = batch;
    g.m = tokens;
    g.n = s.kv_dim();
    g.k = s.hidden;
    g.a = {h, 0, s.hidden, tokens * s.hidden};
    g.b = {weight, 0, s.hidden, 0};
    g.c = {cache, past * s.kv_dim(), s.kv_dim(), max_context * s.kv_dim()};
    return g;
  }

  // scores[head][t][c] = q[seq, t, head] . k[seq, c, head / group] / sqrt(d)
  GemmArgs scores(int seq, const DeviceBuffer* q, const DeviceBuffer* k_cache, const DeviceBuffer* out) const
  {
    GemmArgs g;
    g.batches = s.heads;
    g.m = tokens;
    g.n = context();
    g.k = s.head_dim;
    g.a = {q, seq * tokens * s.q_dim(), s.q_dim(), s.head_dim};
    g.b = {k_cache, seq * max_context * s.kv_dim(), s.kv_dim(), s.head_dim};
    g.b_batch_group = s.heads / s.kv_heads;
    g.c = {out, 0, context(), tokens * context()};
    g.alpha = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    return g;
  }

  SoftmaxArgs softmax(const DeviceBuffer* scores_buffer) const
  {
    return SoftmaxArgs{scores_buffer, s.heads * tokens, context(), 1.0f, CausalMask::causal, tokens};
  }

  // attn[seq, t, head*d + j] = sum_c p[head][t][c] v[seq, c, head / group, j]
  GemmArgs values(int seq, const DeviceBuffer* p, const DeviceBuffer* v_cache, const DeviceBuffer* out) const
  {
    GemmArgs g;
    g.batches = s.heads;
    g.m = tokens;
    g.n = s.head_dim;
    g.k = context();
    g.a = {p, 0, context(), tokens * context()};
    g.b = {v_cache, seq * max_context * s.kv_dim(), s.kv_dim(), s.head_dim};
    g.b_batch_group = s.heads / s.kv_heads;
    g.b_layout = BLayout::plain;
    g.c = {out, seq * tokens * s.q_dim(), s.q_dim(), s.head_dim};
    return g;
  }
};

struct LayerCache
{
  DeviceBuffer k, v;
  std::vector<float> host_k, host_v;
};

Status
run_silu_mul(Session& session, const DeviceBuffer& gate, const DeviceBuffer& up, const DeviceBuffer& out, int n)
{
  PW_ASSIGN(cl_kernel kernel, session.kernel("elementwise.cl", "silu_mul"));
  KernelArgs args;
  args.buffer(gate).buffer(up).buffer(out).value(static_cast<cl_uint>(n));
  const auto local = static_cast<std::size_t>(k_elementwise_local);
  return session.launch(kernel, LaunchGeometry::linear(round_up(static_cast<std::size_t>(n), local), local), args);
}

Status
device_layer(Session& session, const Step& st, const DeviceWeights& w, LayerCache& cache, DeviceActivations& d,
             const DeviceBuffer& in, const DeviceBuffer& out)
{
  const auto& s = st.s;
  PW_TRY(run_rmsnorm(session, {&in, &w.attn_norm, &d.h, st.rows(), s.hidden, st.eps}, {}, k_row_work_group));
  PW_TRY(run_gemm(session, st.linear(&d.h, s.hidden, &w.wq, s.q_dim(), &d.q), {}, k_gemm_tile));
  PW_TRY(run_gemm(session, st.cache_write(&d.h, &w.wk, &cache.k), {}, k_gemm_tile));
  PW_TRY(run_gemm(session, st.cache_write(&d.h, &w.wv, &cache.v), {}, k_gemm_tile));
  for (int seq = 0; seq < st.batch; ++seq) {
    PW_TRY(run_gemm(session, st.scores(seq, &d.q, &cache.k, &d.scores), {}, k_gemm_tile));
    PW_TRY(run_softmax(session, st.softmax(&d.scores), {}, k_row_work_group));
    PW_TRY(run_gemm(session, st.values(seq, &d.scores, &cache.v, &d.attn), {}, k_gemm_tile));
  }
  PW_TRY(run_gemm(session, st.linear(&d.attn, s.q_dim(), &w.wo, s.hidden, &d.x1, &in), {}, k_gemm_tile));
  PW_TRY(run_rmsnorm(session, {&d.x1, &w.ffn_norm, &d.h2, st.rows(), s.hidden, st.eps}, {}, k_row_work_group));
  PW_TRY(run_gemm(session, st.linear(&d.h2, s.hidden, &w.wg, s.ffn, &d.g), {}, k_gemm_tile));
  PW_TRY(run_gemm(session, st.linear(&d.h2, s.hidden, &w.wu, s.ffn, &d.u), {}, k_gemm_tile));
  PW_TRY(run_silu_mul(session, d.g, d.u, d.a, st.rows() * s.ffn));
  PW_TRY(run_gemm(session, st.linear(&d.a, s.ffn, &w.wd, s.hidden, &out, &d.x1), {}, k_gemm_tile));
  return {};
}

void
reference_layer(const Step& st, const HostWeights& w, LayerCache& cache, HostActivations& a, const std::vector<float>& in,
                std::vector<float>& out)
{
  const auto& s = st.s;
  const auto rows = static_cast<std::size_t>(st.rows());
  const DeviceBuffer* none = nullptr;
  a.h.resize(rows * s.hidden);
  a.q.resize(rows * s.q_dim());
  a.scores.assign(static_cast<std::size_t>(s.heads) * st.tokens * st.context(), 0.0f);
  a.attn.resize(rows * s.q_dim());
  a.x1.resize(rows * s.hidden);
  a.h2.resize(rows * s.hidden);
  a.g.resize(rows * s.ffn);
  a.u.resize(rows * s.ffn);
  a.a.resize(rows * s.ffn);
  out.resize(rows * s.hidden);

  reference_rmsnorm({none, none, none, st.rows(), s.hidden, st.eps}, in.data(), w.attn_norm.data(), a.h.data());
  reference_gemm(st.linear(none, s.hidden, none, s.q_dim(), none), a.h.data(), w.wq.data(), a.q.data(), nullptr);
  reference_gemm(st.cache_write(none, none, none), a.h.data(), w.wk.data(), cache.host_k.data(), nullptr);
  reference_gemm(st.cache_write(none, none, none), a.h.data(), w.wv.data(), cache.host_v.data(), nullptr);
  for (int seq = 0; seq < st.batch; ++seq) {
    reference_gemm(st.scores(seq, none, none, none), a.q.data(), cache.host_k.data(), a.scores.data(), nullptr);
    reference_softmax(st.softmax(none), a.scores.data());
    reference_gemm(st.values(seq, none, none, none), a.scores.data(), cache.host_v.data(), a.attn.data(), nullptr);
  }
  reference_gemm(st.linear(none, s.q_dim(), none, s.hidden, none, none), a.attn.data(), w.wo.data(), a.x1.data(), in.data());
  reference_rmsnorm({none, none, none, st.rows(), s.hidden, st.eps}, a.x1.data(), w.ffn_norm.data(), a.h2.data());
  reference_gemm(st.linear(none, s.hidden, none, s.ffn, none), a.h2.data(), w.wg.data(), a.g.data(), nullptr);
  reference_gemm(st.linear(none, s.hidden, none, s.ffn, none), a.h2.data(), w.wu.data(), a.u.data(), nullptr);
  for (std::size_t i = 0; i < a.a.size(); ++i) {
    const double g = a.g[i];
    a.a[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * a.u[i]);
  }
  reference_gemm(st.linear(none, s.ffn, none, s.hidden, none, none), a.a.data(), w.wd.data(), out.data(), a.x1.data());
}

OutputCheck
compare(std::string name, std::span<const float> got, std::span<const float> want)
{
  OutputCheck check;
  check.name = std::move(name);
  double peak = 1.0;
  for (float v : want) {
    peak = std::max(peak, static_cast<double>(std::fabs(v)));
  }
  check.passed = got.size() == want.size();
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double error = std::fabs(static_cast<double>(got[i]) - want[i]);
    const double magnitude = std::fabs(static_cast<double>(want[i]));
    check.max_abs_error = std::max(check.max_abs_error, error);
    check.max_rel_error = std::max(check.max_rel_error, error / std::max(magnitude, peak * 1e-3));
    // NaN compares false: a NaN output fails.
    if (!(error <= k_fp32_abs * peak + k_fp32_rel * magnitude)) {
      check.passed = false;
    }
  }
  return check;
}

} // namespace

Status
run_decoder_workload(Session& session,
                     const DecoderArchitecture& arch,
                     const WorkloadRequest& request,
                     Clock::time_point started,
                     WorkloadReport& report)
{
  if (request.precision != Precision::fp32) {
    return fail(Errc::usage,
                fmt::format("decoder workload: precision {} is not supported by the engine yet (fp32 only)",
                            to_string(request.precision)),
                "E_UNSUPPORTED_PRECISION");
  }
  if (arch.hidden <= 0 || arch.heads <= 0 || arch.kv_heads <= 0 || arch.head_dim <= 0 || arch.ffn <= 0 || arch.layers <= 0 ||
      arch.heads % arch.kv_heads != 0) {
    return fail(Errc::usage,
                fmt::format("decoder {}: hidden={} heads={} kv_heads={} head_dim={} ffn={} layers={}: all must be positive "
                            "and heads a multiple of kv_heads",
                            request.model.name, arch.hidden, arch.heads, arch.kv_heads, arch.head_dim, arch.ffn, arch.layers));
  }
  if (arch.norm != DecoderArchitecture::Norm::rmsnorm || arch.activation != DecoderArchitecture::Activation::silu) {
    return fail(Errc::usage, "decoder workload: only RMSNorm + SiLU (SwiGLU) decoders are supported yet", "E_UNSUPPORTED_MODEL");
  }
  if (request.shapes.batch_sizes.empty() || request.shapes.prefill_lengths.empty() || request.shapes.decode_steps < 0) {
    return fail(Errc::usage, "decoder workload: at least one batch size and one prefill length are needed");
  }
  const Shape s{arch.hidden, arch.heads, arch.kv_heads, arch.head_dim, arch.ffn};
  const int layers = request.coverage == Coverage::full ? arch.layers : 1;
  report.layers_run = layers;
  report.layers_in_model = arch.layers;
  report.representative = request.coverage == Coverage::representative;
  report.tolerance_abs = k_fp32_abs;
  report.tolerance_rel = k_fp32_rel;

  SeededRandom random;
  const auto host_weights = make_weights(s, random);
  PW_ASSIGN(const auto weights, upload_weights(session, host_weights));

  bool first_checked = false;
  double reference_seconds = 0;
  for (const int batch : request.shapes.batch_sizes) {
    for (const int prefill : request.shapes.prefill_lengths) {
      if (batch <= 0 || prefill <= 0) {
        return fail(Errc::usage, fmt::format("decoder workload: batch {} and prefill {} must be positive", batch, prefill));
      }
      const int max_context = prefill + request.shapes.decode_steps;
      const auto cache_elements = static_cast<std::size_t>(batch) * max_context * s.kv_dim();
      std::vector<LayerCache> caches(static_cast<std::size_t>(layers));
      for (auto& c : caches) {
        PW_ASSIGN(c.k, session.allocate(cache_elements * sizeof(float)));
        PW_ASSIGN(c.v, session.allocate(cache_elements * sizeof(float)));
        c.host_k.assign(cache_elements, 0.0f);
        c.host_v.assign(cache_elements, 0.0f);
      }
      PW_ASSIGN(auto act, allocate_activations(session, s, batch * prefill, max_context));
      PW_ASSIGN(auto ping, session.allocate(static_cast<std::size_t>(batch) * prefill * s.hidden * sizeof(float)));
      HostActivations host_act;

      for (int step = -1; step < request.shapes.decode_steps; ++step) {
        const bool is_prefill = step < 0;
        Step st{s, batch, is_prefill ? prefill : 1, is_prefill ? 0 : prefill + step, max_context,
                static_cast<float>(arch.norm_eps)};
        auto input = random.uniform(static_cast<std::size_t>(st.rows()) * s.hidden, 1.0f);
        PW_TRY(session.write(act.x, std::span<const float>(input)));

        // Layers alternate between two buffers: x -> y -> ping -> y ...
        const DeviceBuffer* in = &act.x;
        const DeviceBuffer* out = &act.y;
        for (int layer = 0; layer < layers; ++layer) {
          PW_TRY(device_layer(session, st, weights, caches[static_cast<std::size_t>(layer)], act, *in, *out));
          in = out;
          out = (out == &act.y) ? &ping : &act.y;
        }
        std::vector<float> got(static_cast<std::size_t>(st.rows()) * s.hidden);
        PW_TRY(session.read(*in, std::span<float>(got)));

        const auto reference_start = Clock::now();
        std::vector<float> want = input;
        std::vector<float> next;
        for (int layer = 0; layer < layers; ++layer) {
          reference_layer(st, host_weights, caches[static_cast<std::size_t>(layer)], host_act, want, next);
          std::swap(want, next);
        }
        reference_seconds += std::chrono::duration<double>(Clock::now() - reference_start).count();

        auto check = compare(is_prefill ? fmt::format("prefill batch={} length={} layers={}", batch, prefill, layers)
                                        : fmt::format("decode batch={} context={} layers={}", batch, st.context(), layers),
                             got, want);
        log::verbose("{}: max abs error {:.3g}, max rel error {:.3g}: {}", check.name, check.max_abs_error,
                     check.max_rel_error, check.passed ? "ok" : "MISMATCH");
        report.max_abs_error = std::max(report.max_abs_error, check.max_abs_error);
        report.max_rel_error = std::max(report.max_rel_error, check.max_rel_error);
        report.checks.push_back(check);
        if (!first_checked) {
          // The reference's own time is not part of what a user waits for.
          report.first_result_seconds =
            std::chrono::duration<double>(Clock::now() - started).count() - reference_seconds;
          first_checked = true;
        }
        if (!check.passed) {
          return fail(Errc::failed,
                      fmt::format("{} on {}: output differs from the CPU reference: max abs error {:.3g}, max rel error "
                                  "{:.3g} (tolerance {:.0e} * peak + {:.0e} * |want|)",
                                  check.name, session.device().description, check.max_abs_error, check.max_rel_error,
                                  k_fp32_abs, k_fp32_rel),
                      "E_WORKLOAD_MISMATCH");
        }
      }
    }
  }
  report.reference_seconds = reference_seconds;
  report.notes = fmt::format(
    "decoder layer at fp32: RMSNorm, Q/K/V GEMMs into a KV cache, causal grouped-query attention (softmax(QK^T/sqrt(d))V), "
    "output GEMM + residual, RMSNorm, SwiGLU FFN; {} of {} layers ({}), seeded random weights shared by the layers; "
    "not yet: RoPE, embedding, LM head",
    layers, arch.layers, report.representative ? "representative: one layer per distinct layer shape" : "full");
  return {};
}

} // namespace prewarm::engine
