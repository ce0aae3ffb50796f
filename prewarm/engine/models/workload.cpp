// SPDX-License-Identifier: Apache-2.0
#include "engine/models/workload.hpp"

#include "base/log.hpp"
#include "engine/models/cnn_forward.hpp"
#include "engine/models/decoder_forward.hpp"
#include "engine/models/gptq_stack_forward.hpp"
#include "engine/ops/precision.hpp"
#include "engine/ops/tolerance.hpp"
#include "engine/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <variant>

namespace prewarm::engine::models {
namespace {

using Clock = std::chrono::steady_clock;

// Weights and inputs are seeded: a run is reproducible, nothing is downloaded.
constexpr std::uint32_t k_workload_seed = 0x70726577; // "prew"
// Representative runs cap the embedding/LM-head vocabulary: the kernel
// variants do not depend on it, the CPU reference's time and memory do.
constexpr std::size_t k_representative_vocab = 4096;

double
seconds_since(Clock::time_point start)
{
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One checked forward pass into the report.
void
record(WorkloadReport& report, const Session& session, std::string name, const ForwardSummary& summary,
       Clock::time_point started)
{
  if (report.checks.empty()) {
    report.first_result_seconds = seconds_since(started);
    const auto& stats = session.stats();
    report.first_result_device_seconds =
      report.session_open_seconds + stats.compile_seconds + stats.execute_seconds;
    report.first_result_host_seconds =
      std::max(0.0, report.first_result_seconds - report.first_result_device_seconds);
  }
  report.max_abs_error = std::max(report.max_abs_error, summary.max_abs_error);
  report.max_rel_error = std::max(report.max_rel_error, summary.max_rel_error);
  report.checks.push_back(OutputCheck{std::move(name), summary.max_abs_error, summary.max_rel_error, true, summary.checks});
}

Status
run_decoder(Session& session, const DecoderArchitecture& arch, const WorkloadRequest& request, Clock::time_point started,
            WorkloadReport& report)
{
  const bool full = request.coverage == Coverage::full;
  report.layers_run = full ? arch.layers : 1;
  report.layers_in_model = arch.layers;
  const auto tolerance =
    ops::tolerance_for(ops::FloatFormat::for_precision(request.precision, session),
                       request.precision == Precision::int8 ? ops::Quantization::w8a8 : ops::Quantization::none);
  report.tolerance_abs = tolerance.abs;
  report.tolerance_rel = tolerance.rel;
  for (const int batch : request.shapes.batch_sizes) {
    for (const int prefill : request.shapes.prefill_lengths) {
      if (batch <= 0 || prefill <= 0 || request.shapes.decode_steps < 0) {
        return fail(Errc::usage, fmt::format("batch {}, prefill {}, decode steps {}: batch and prefill must be positive",
                                             batch, prefill, request.shapes.decode_steps));
      }
      DecoderForwardOptions options;
      options.batch = static_cast<std::size_t>(batch);
      options.prefill = static_cast<std::size_t>(prefill);
      options.decode_steps = static_cast<std::size_t>(request.shapes.decode_steps);
      options.layers = static_cast<std::size_t>(report.layers_run);
      options.max_vocab = full ? 0 : k_representative_vocab;
      options.seed = k_workload_seed;
      const auto name = fmt::format("decoder batch={} prefill={} decode={}", batch, prefill, request.shapes.decode_steps);
      PW_ASSIGN_CTX(const auto summary, name, run_decoder_forward(session, arch, request.precision, options));
      record(report, session, name, summary, started);
    }
  }
  report.notes = fmt::format(
    "decoder: embedding, {} -> Q/K/V linear -> RoPE -> KV cache -> causal GQA attention -> O linear + residual -> "
    "{} -> {} MLP -> down linear + residual; final norm, LM head; prefill (tiled GEMM) then {} greedy decode steps "
    "(GEMV, decode attention); {}; {} of {} layers ({}), vocabulary {}; seeded random weights shared by the layers; "
    "every op checked against its CPU reference",
    arch.norm == DecoderArchitecture::Norm::rmsnorm ? "RMSNorm" : "LayerNorm",
    arch.norm == DecoderArchitecture::Norm::rmsnorm ? "RMSNorm" : "LayerNorm",
    arch.activation == DecoderArchitecture::Activation::silu ? "SwiGLU" : "GELU", request.shapes.decode_steps,
    request.precision == Precision::int8 ? "linears W8A8 (per-token int8 activations, per-channel int8 weights)"
                                         : fmt::format("{} throughout", to_string(request.precision)),
    report.layers_run, arch.layers, full ? "full" : "representative: one layer per distinct layer shape",
    full ? fmt::format("{}", arch.vocab) : fmt::format("capped at {} rows", std::min<std::size_t>(k_representative_vocab, static_cast<std::size_t>(arch.vocab))));
  return {};
}

Status
run_cnn(Session& session, const CnnArchitecture& arch, const WorkloadRequest& request, Clock::time_point started,
        WorkloadReport& report)
{
  report.layers_run = static_cast<int>(arch.layers.size()) + 1;
  report.layers_in_model = report.layers_run;
  const auto tolerance =
    ops::tolerance_for(ops::FloatFormat::for_precision(request.precision, session),
                       request.precision == Precision::int8 ? ops::Quantization::w8a8 : ops::Quantization::none);
  report.tolerance_abs = tolerance.abs;
  report.tolerance_rel = tolerance.rel;
  for (const int batch : request.shapes.batch_sizes) {
    if (batch <= 0) {
      return fail(Errc::usage, fmt::format("batch {} must be positive", batch));
    }
    const auto name = fmt::format("cnn batch={}", batch);
    PW_ASSIGN_CTX(const auto summary, name,
                  run_cnn_forward(session, arch, request.precision, static_cast<std::size_t>(batch), k_workload_seed));
    record(report, session, name, summary, started);
  }
  report.notes = fmt::format("cnn: {} conv2d + folded batch-norm + ReLU layers (max-pool where set), 1x1 classifier to {} "
                             "classes, {}x{}x{} input; every layer (a CNN's layers differ in shape); {}",
                             arch.layers.size(), arch.classes, arch.input_width, arch.input_height, arch.input_channels,
                             request.precision == Precision::int8 ? "int8: W8A8 convolutions, fp16 between layers"
                                                                  : fmt::format("{} throughout", to_string(request.precision)));
  return {};
}

Status
run_gptq(Session& session, const GptqStackArchitecture& arch, const WorkloadRequest& request, Clock::time_point started,
         WorkloadReport& report)
{
  if (request.precision == Precision::int8) {
    return fail(Errc::usage,
                "GPTQ models are 4-bit weights with float activations: use --precision fp16 (what they run with), bf16 "
                "or fp32",
                "E_UNSUPPORTED_PRECISION");
  }
  const auto format = ops::FloatFormat::for_precision(request.precision, session);
  const auto tolerance = ops::tolerance_for(format, ops::Quantization::gptq_int4);
  report.tolerance_abs = tolerance.abs;
  report.tolerance_rel = tolerance.rel;
  report.layers_run = static_cast<int>(arch.layers.size());
  report.layers_in_model = report.layers_run;
  for (const int batch : request.shapes.batch_sizes) {
    for (const int prefill : request.shapes.prefill_lengths) {
      if (batch <= 0 || prefill <= 0) {
        return fail(Errc::usage, fmt::format("batch {} and prefill {} must be positive", batch, prefill));
      }
      const auto rows = static_cast<std::size_t>(batch) * static_cast<std::size_t>(prefill);
      const auto name = fmt::format("gptq rows={} (batch {} x {} tokens)", rows, batch, prefill);
      PW_ASSIGN_CTX(const auto summary, name, run_gptq_stack_forward(session, arch, format, rows, k_workload_seed));
      record(report, session, name, summary, started);
    }
  }
  report.notes = fmt::format("gptq: {} 4-bit linear layers, group size {}, {}; activations {}", arch.layers.size(),
                             arch.group_size, arch.act_order ? "act-order (g_idx reorder kernel)" : "no act-order",
                             ops::to_string(format));
  return {};
}

} // namespace

Result<WorkloadReport>
run_workload(const WorkloadRequest& request)
{
  const auto started = Clock::now();
  WorkloadReport report;
  report.model = request.model.name;
  report.precision = request.precision;
  report.program_store = request.program_store.string();
  report.representative = request.coverage == Coverage::representative;

  report.backend = request.backend;
  PW_ASSIGN(auto session, Session::open(SessionOptions{request.device_selector, request.program_store, request.store_mode,
                                                       request.backend, request.spirv_compiler}));
  report.session_open_seconds = seconds_since(started);
  report.device_description = session.device().description;
  report.device_properties = session.device().properties;
  log::verbose("{} at {} on {}", request.model.name, to_string(request.precision), report.device_description);

  const auto context = fmt::format("{} ({}) on {}", request.model.name, to_string(request.precision), report.device_description);
  if (request.shapes.batch_sizes.empty() || request.shapes.prefill_lengths.empty()) {
    return fail(Errc::usage, fmt::format("{}: at least one batch size and one prefill length are needed", context));
  }
  const Status ran = std::visit(
    [&](const auto& body) -> Status {
      using Body = std::decay_t<decltype(body)>;
      if constexpr (std::is_same_v<Body, DecoderArchitecture>) {
        return run_decoder(session, body, request, started, report);
      } else if constexpr (std::is_same_v<Body, CnnArchitecture>) {
        return run_cnn(session, body, request, started, report);
      } else {
        return run_gptq(session, body, request, started, report);
      }
    },
    request.model.body);
  PW_TRY_CTX(context, ran);

  // After every launch: PoCL's binaries then include the code it generated
  // for each local size at the first enqueue.
  PW_TRY_CTX(context, session.capture_programs());

  const auto& stats = session.stats();
  report.variants = stats.variants;
  report.launches = stats.launches;
  report.compile_seconds = stats.compile_seconds;
  report.execute_seconds = stats.execute_seconds;
  report.store = stats.store;
  report.aot_programs = stats.aot_programs;
  report.aot_served = stats.aot_served;
  report.aot_fallbacks = stats.aot_fallbacks;
  report.peak_device_bytes = stats.peak_device_bytes;
  report.total_seconds = seconds_since(started);
  return report;
}

nlohmann::json
to_json(const WorkloadReport& r)
{
  nlohmann::json checks = nlohmann::json::array();
  std::size_t op_checks = 0;
  for (const auto& c : r.checks) {
    checks.push_back({{"name", c.name},
                      {"op_checks", c.op_checks},
                      {"max_abs_error", c.max_abs_error},
                      {"max_rel_error", c.max_rel_error},
                      {"passed", c.passed}});
    op_checks += c.op_checks;
  }
  nlohmann::json properties = nlohmann::json::object();
  for (const auto& [key, value] : r.device_properties) {
    properties[key] = value;
  }
  return {
    {"model", r.model},
    {"precision", std::string(to_string(r.precision))},
    {"device", {{"description", r.device_description}, {"backend", std::string(to_string(r.backend))}, {"properties", properties}}},
    {"coverage", r.representative ? "representative" : "full"},
    {"layers_run", r.layers_run},
    {"layers_in_model", r.layers_in_model},
    {"variants", r.variants},
    {"launches", r.launches},
    // first_result: wall time to the first checked forward pass, host work
    // of this synthetic engine included; first_result_device: the device
    // path only (session open + compile + execute up to then);
    // first_result_host: the difference (weights, CPU references, checks).
    {"seconds",
     {{"first_result", r.first_result_seconds},
      {"first_result_device", r.first_result_device_seconds},
      {"first_result_host", r.first_result_host_seconds},
      {"session_open", r.session_open_seconds},
      {"compile", r.compile_seconds},
      {"execute", r.execute_seconds},
      {"total", r.total_seconds}}},
    {"accuracy",
     {{"max_abs_error", r.max_abs_error},
      {"max_rel_error", r.max_rel_error},
      {"tolerance_abs", r.tolerance_abs},
      {"tolerance_rel", r.tolerance_rel},
      {"op_checks", op_checks},
      {"forward_passes", checks}}},
    {"program_store",
     {{"path", r.program_store},
      {"hits", r.store.hits},
      {"misses", r.store.misses},
      {"rejected", r.store.rejected},
      {"captured", r.store.captured}}},
    {"aot", {{"served", r.aot_served}, {"fallbacks", r.aot_fallbacks}, {"programs", r.aot_programs}}},
    {"peak_device_bytes", r.peak_device_bytes},
    {"notes", r.notes},
  };
}

std::string
to_text(const WorkloadReport& r)
{
  std::size_t op_checks = 0;
  for (const auto& c : r.checks) {
    op_checks += c.op_checks;
  }
  std::string text;
  text += fmt::format("model:          {} ({})\n", r.model, to_string(r.precision));
  text += fmt::format("device:         {}\n", r.device_description);
  text += fmt::format("coverage:       {}, {} of {} layers\n", r.representative ? "representative" : "full", r.layers_run,
                      r.layers_in_model);
  text += fmt::format("first result:   {:.3f} s (first forward pass done and checked)\n", r.first_result_seconds);
  text += fmt::format("  device path:  {:.3f} s (session open {:.3f} s + compile + execute up to the first result)\n",
                      r.first_result_device_seconds, r.session_open_seconds);
  text += fmt::format("  host work:    {:.3f} s (seeded weights, CPU references, checks: what a real engine skips)\n",
                      r.first_result_host_seconds);
  text += fmt::format("compile:        {:.3f} s\n", r.compile_seconds);
  text += fmt::format("execute:        {:.3f} s ({} launches)\n", r.execute_seconds, r.launches);
  text += fmt::format("total:          {:.3f} s\n", r.total_seconds);
  text += fmt::format("accuracy:       max abs error {:.3g}, max rel error {:.3g}; {} op outputs in {} forward passes "
                      "within tolerance ({:.0e} * peak + {:.0e} * |want|)\n",
                      r.max_abs_error, r.max_rel_error, op_checks, r.checks.size(), r.tolerance_abs, r.tolerance_rel);
  if (r.program_store.empty()) {
    text += "program store:  none\n";
  } else if (r.backend == Backend::level_zero) {
    text += fmt::format("program store:  {}: AOT binaries only (Level Zero keeps no OpenCL binaries)\n", r.program_store);
  } else {
    text += fmt::format("program store:  {}: {} hits, {} misses, {} rejected, {} captured\n", r.program_store, r.store.hits,
                        r.store.misses, r.store.rejected, r.store.captured);
  }
  if (!r.aot_programs.empty()) {
    text += fmt::format("AOT binaries:   {} served, {} fell back\n", r.aot_served, r.aot_fallbacks);
    for (const auto& line : r.aot_programs) {
      text += fmt::format("  {}\n", line);
    }
  }
  text += fmt::format("device memory:  {:.1f} MiB peak\n", static_cast<double>(r.peak_device_bytes) / (1024.0 * 1024.0));
  text += fmt::format("variants:       {}\n", r.variants.size());
  for (const auto& v : r.variants) {
    text += fmt::format("  {}\n", v);
  }
  if (!r.notes.empty()) {
    text += fmt::format("notes:          {}\n", r.notes);
  }
  return text;
}

} // namespace prewarm::engine::models
