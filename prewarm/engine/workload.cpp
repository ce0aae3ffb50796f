// SPDX-License-Identifier: Apache-2.0
#include "engine/workload.hpp"

#include "base/log.hpp"
#include "engine/decoder_workload.hpp"
#include "engine/session.hpp"

#include <fmt/format.h>

#include <chrono>
#include <variant>

namespace prewarm::engine {

Result<WorkloadReport>
run_workload(const WorkloadRequest& request)
{
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  WorkloadReport report;
  report.model = request.model.name;
  report.precision = request.precision;
  report.program_store = request.program_store.string();

  PW_ASSIGN(auto session, Session::open(SessionOptions{request.device_selector, request.program_store, request.store_mode}));
  report.device_description = session.device().description;
  report.device_properties = session.device().properties;
  log::verbose("{} at {} on {}", request.model.name, to_string(request.precision), report.device_description);

  const auto context = fmt::format("{} ({}) on {}", request.model.name, to_string(request.precision), report.device_description);
  if (const auto* decoder = std::get_if<DecoderArchitecture>(&request.model.body)) {
    PW_TRY_CTX(context, run_decoder_workload(session, *decoder, request, started, report));
  } else {
    return fail(Errc::usage,
                fmt::format("{}: CNN and GPTQ workloads are not supported by the engine yet (decoder only)", context),
                "E_UNSUPPORTED_MODEL");
  }

  // After every launch: PoCL's binaries then include the code it generated
  // for each local size at the first enqueue.
  PW_TRY_CTX(context, session.capture_programs());

  const auto& stats = session.stats();
  report.variants = stats.variants;
  report.launches = stats.launches;
  report.compile_seconds = stats.compile_seconds;
  report.execute_seconds = stats.execute_seconds;
  report.store = stats.store;
  report.peak_device_bytes = stats.peak_device_bytes;
  report.total_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return report;
}

nlohmann::json
to_json(const WorkloadReport& r)
{
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks) {
    checks.push_back({{"name", c.name}, {"max_abs_error", c.max_abs_error}, {"max_rel_error", c.max_rel_error}, {"passed", c.passed}});
  }
  nlohmann::json properties = nlohmann::json::object();
  for (const auto& [key, value] : r.device_properties) {
    properties[key] = value;
  }
  return {
    {"model", r.model},
    {"precision", std::string(to_string(r.precision))},
    {"device", {{"description", r.device_description}, {"properties", properties}}},
    {"coverage", r.representative ? "representative" : "full"},
    {"layers_run", r.layers_run},
    {"layers_in_model", r.layers_in_model},
    {"variants", r.variants},
    {"launches", r.launches},
    {"seconds",
     {{"first_result", r.first_result_seconds},
      {"compile", r.compile_seconds},
      {"execute", r.execute_seconds},
      {"reference", r.reference_seconds},
      {"total", r.total_seconds}}},
    {"accuracy",
     {{"max_abs_error", r.max_abs_error},
      {"max_rel_error", r.max_rel_error},
      {"tolerance_abs", r.tolerance_abs},
      {"tolerance_rel", r.tolerance_rel},
      {"checks", checks}}},
    {"program_store",
     {{"path", r.program_store},
      {"hits", r.store.hits},
      {"misses", r.store.misses},
      {"rejected", r.store.rejected},
      {"captured", r.store.captured}}},
    {"peak_device_bytes", r.peak_device_bytes},
    {"notes", r.notes},
  };
}

std::string
to_text(const WorkloadReport& r)
{
  std::string text;
  text += fmt::format("model:          {} ({})\n", r.model, to_string(r.precision));
  text += fmt::format("device:         {}\n", r.device_description);
  text += fmt::format("coverage:       {}, {} of {} layers\n", r.representative ? "representative" : "full", r.layers_run,
                      r.layers_in_model);
  text += fmt::format("first result:   {:.3f} s\n", r.first_result_seconds);
  text += fmt::format("compile:        {:.3f} s\n", r.compile_seconds);
  text += fmt::format("execute:        {:.3f} s ({} launches)\n", r.execute_seconds, r.launches);
  text += fmt::format("total:          {:.3f} s (CPU reference {:.3f} s)\n", r.total_seconds, r.reference_seconds);
  text += fmt::format("accuracy:       max abs error {:.3g}, max rel error {:.3g} over {} checked outputs: ok\n",
                      r.max_abs_error, r.max_rel_error, r.checks.size());
  if (r.program_store.empty()) {
    text += "program store:  none\n";
  } else {
    text += fmt::format("program store:  {}: {} hits, {} misses, {} rejected, {} captured\n", r.program_store, r.store.hits,
                        r.store.misses, r.store.rejected, r.store.captured);
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

} // namespace prewarm::engine
