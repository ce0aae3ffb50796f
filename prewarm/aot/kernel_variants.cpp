// SPDX-License-Identifier: Apache-2.0
#include "aot/kernel_variants.hpp"

#include "engine/models/forward_programs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

namespace prewarm::aot {

std::string
render_options(const std::map<std::string, std::string>& defines)
{
  std::string options;
  for (const auto& [name, value] : defines) {
    if (!options.empty()) {
      options += ' ';
    }
    options += "-D" + name;
    if (!value.empty()) {
      options += "=" + value;
    }
  }
  return options;
}

namespace {

// Intel GPUs have cl_khr_fp16: the engine computes fp16 in half there (bf16
// computes in float on every device).
constexpr auto k_intel_half_compute = engine::ops::Compute::fp16;

void
append(std::vector<KernelVariant>& out, const std::vector<engine::models::ProgramVariant>& programs)
{
  for (const auto& p : programs) {
    out.push_back({p.source_name, p.options});
  }
}

} // namespace

Result<std::vector<KernelVariant>>
workload_variants(const model::ModelArchitecture& model, model::Precision precision, const model::Shapes& shapes,
                  model::Coverage coverage)
{
  std::vector<KernelVariant> variants;
  Status status;
  std::visit(
    [&](const auto& arch) {
      using Arch = std::decay_t<decltype(arch)>;
      if constexpr (std::is_same_v<Arch, model::DecoderArchitecture>) {
        for (const int batch : shapes.batch_sizes) {
          for (const int prefill : shapes.prefill_lengths) {
            if (batch <= 0 || prefill <= 0 || shapes.decode_steps < 0) {
              status = fail(Errc::usage, fmt::format("batch {}, prefill {}, decode steps {}: batch and prefill must "
                                                     "be positive",
                                                     batch, prefill, shapes.decode_steps));
              return;
            }
            engine::models::DecoderForwardOptions options;
            options.batch = static_cast<std::size_t>(batch);
            options.prefill = static_cast<std::size_t>(prefill);
            options.decode_steps = static_cast<std::size_t>(shapes.decode_steps);
            options.layers = coverage == model::Coverage::full ? static_cast<std::size_t>(arch.layers) : 1;
            append(variants, engine::models::decoder_forward_programs(arch, precision, k_intel_half_compute, options));
          }
        }
      } else if constexpr (std::is_same_v<Arch, model::CnnArchitecture>) {
        append(variants, engine::models::cnn_forward_programs(arch, precision, k_intel_half_compute));
      } else {
        // As the run path (engine/models/workload.cpp run_gptq): no int8; fp16 stores
        // and (on Intel) computes half; bf16 stores bf16 and computes float.
        if (precision == model::Precision::int8) {
          status = fail(Errc::usage, "GPTQ models run fp16, bf16 or fp32, not int8 (as `prewarm run`)",
                        "E_UNSUPPORTED_PRECISION");
          return;
        }
        append(variants, engine::models::gptq_stack_forward_programs(
                           engine::ops::FloatFormat::for_precision(precision, k_intel_half_compute)));
      }
    },
    model.body);
  PW_TRY(status);
  std::ranges::sort(variants);
  variants.erase(std::unique(variants.begin(), variants.end()), variants.end());
  if (variants.empty()) {
    return fail(Errc::internal, fmt::format("AOT: the engine lists no programs for {}", model.name));
  }
  return variants;
}

} // namespace prewarm::aot
