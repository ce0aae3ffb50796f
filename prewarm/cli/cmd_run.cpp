// SPDX-License-Identifier: Apache-2.0
// prewarm run MODEL --precision P [--backend opencl|level-zero] [--device D]
//             [--batch N] [--prefill L] [--decode S] [--full] [--store DIR] [--json]
// One representative inference with timings (engine::models::run_workload) of a
// model preset (manifests/presets.yaml).
// Program store: --store DIR (read-write), else $PREWARM_PROGRAM_STORE
// (read-only when this process cannot write there), else none.
// Level Zero builds modules from the store's AOT binaries (NATIVE) or SPIR-V;
// SPIR-V the store lacks is made with ocloc for the device's PCI id.
#include "aot/spirv_compiler.hpp"
#include "base/encoding.hpp"
#include "base/json_schema.hpp"
#include "base/log.hpp"
#include "cli/commands.hpp"
#include "engine/models/workload.hpp"
#include "manifest/presets.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace prewarm::cli {
namespace {

struct RunOptions
{
  std::string model;
  std::string precision;
  std::string backend = "opencl";
  std::string device;
  std::vector<int> batch_sizes;
  std::vector<int> prefill_lengths;
  int decode_steps = 2;
  bool full = false;
  std::string store;
  bool json = false;
};

Result<model::Precision>
parse_precision(std::string_view text)
{
  if (const auto precision = model::parse_precision(text)) {
    return *precision;
  }
  return fail(Errc::usage, fmt::format("--precision {}: expected one of {}", in_quotes(text), model::precision_names()));
}

// A store this process may fill, or one it may only read (a shared,
// image-baked store): never fail a run because the store is read-only.
store::StoreMode
mode_for_environment_store(const std::filesystem::path& dir)
{
  std::error_code ec;
  const auto probe = std::filesystem::exists(dir, ec) ? dir : dir.parent_path();
  return ::access(probe.empty() ? "." : probe.c_str(), W_OK) == 0 ? store::StoreMode::read_write
                                                                   : store::StoreMode::read_only;
}

Status
run(const RunOptions& options)
{
  PW_ASSIGN(const auto presets, manifest::PresetLibrary::embedded());
  const auto* model = presets.find(options.model);
  if (model == nullptr) {
    std::string known;
    for (const auto& name : presets.names()) {
      known += (known.empty() ? "" : ", ") + name;
    }
    return fail(Errc::usage, fmt::format("unknown model preset {} (presets: {})", in_quotes(options.model), known));
  }
  PW_ASSIGN(const auto precision, parse_precision(options.precision));
  engine::models::WorkloadRequest request;
  request.model = *model;
  request.precision = precision;
  if (!options.batch_sizes.empty()) {
    request.shapes.batch_sizes = options.batch_sizes;
  }
  if (!options.prefill_lengths.empty()) {
    request.shapes.prefill_lengths = options.prefill_lengths;
  }
  request.shapes.decode_steps = options.decode_steps;
  request.coverage = options.full ? model::Coverage::full : model::Coverage::representative;
  request.device_selector = options.device;
  PW_ASSIGN(request.backend, engine::parse_backend(options.backend));
  if (request.backend == engine::Backend::level_zero) {
    request.spirv_compiler = aot::ocloc_spirv_compiler();
  }
  if (!options.store.empty()) {
    request.program_store = options.store;
    request.store_mode = store::StoreMode::read_write;
  } else if (const char* env = std::getenv("PREWARM_PROGRAM_STORE"); env != nullptr && *env != '\0') {
    request.program_store = env;
    request.store_mode = mode_for_environment_store(request.program_store);
  }

  if (::isatty(STDERR_FILENO) != 0 && log::enabled(log::Level::normal)) {
    log::info("running {} at {}{}...", request.model.name, options.precision,
              options.device.empty() ? std::string{} : fmt::format(" on device {}", in_quotes(options.device)));
  }
  PW_ASSIGN(const auto report, engine::models::run_workload(request));
  if (options.json) {
    auto out = engine::models::to_json(report);
    out[k_json_schema_version_key] = k_json_schema_version;
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{}", engine::models::to_text(report));
  }
  std::fflush(stdout);
  return {};
}

} // namespace

void
add_run_command(CLI::App& app, Action& action)
{
  auto options = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "run one representative inference on an OpenCL or Level Zero device, with timings");
  cmd->add_option("model", options->model, "model preset (manifests/presets.yaml: qwen2.5-0.5b, lprnet, gptq-linear)")->required();
  cmd->add_option("--precision", options->precision, "fp32 | fp16 | bf16 | int8")->required();
  cmd->add_option("--backend", options->backend, "opencl (default) | level-zero")
    ->check(CLI::IsMember({"opencl", "level-zero"}));
  cmd->add_option("--device", options->device,
                  "OpenCL device: index, or a case-insensitive part of its platform/device name (default: the first GPU, "
                  "else the first device); Level Zero device: index, part of its name or 0x<pci id> (default: 0)");
  cmd->add_option("--batch", options->batch_sizes, "batch size (repeatable; default 1)")->check(CLI::PositiveNumber);
  cmd->add_option("--prefill", options->prefill_lengths, "prefill length in tokens (repeatable; default 16)")
    ->check(CLI::PositiveNumber);
  cmd->add_option("--decode", options->decode_steps, "decode steps after each prefill (default 2)")
    ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--full", options->full, "run every layer (default: one layer per distinct layer shape)");
  cmd->add_option("--store", options->store,
                  "program store directory, read-write (default: $PREWARM_PROGRAM_STORE, read-only if not writable)");
  cmd->add_flag("--json", options->json, "print the report as JSON");
  cmd->callback([&action, options] { action = [options] { return run(*options); }; });
}

} // namespace prewarm::cli
