// SPDX-License-Identifier: Apache-2.0
#include "builtin/job_report.hpp"

#include "base/files.hpp"
#include "jobs/strict_json.hpp"

#include <fmt/format.h>

#include <initializer_list>
#include <limits>
#include <string_view>
#include <utility>

namespace prewarm::builtin {
namespace {

using jobs::ObjectReader;
using nlohmann::json;

constexpr std::size_t k_report_max_bytes = 64 << 20;

Status
read_device(ObjectReader& root, engine::models::WorkloadReport& report)
{
  PW_ASSIGN(auto device, root.object("device"));
  PW_ASSIGN(report.device_description, device.string("description"));
  PW_ASSIGN(const auto backend, device.string("backend"));
  PW_ASSIGN_CTX(report.backend, device.path_of("backend"), engine::parse_backend(backend));
  PW_ASSIGN(auto properties, device.object("properties"));
  PW_ASSIGN(const auto* all, device.field("properties"));
  for (const auto& [key, value] : all->items()) {
    PW_ASSIGN(auto text, properties.string(key));
    report.device_properties.emplace(key, std::move(text));
  }
  PW_TRY(properties.finish());
  return device.finish();
}

// Every field of `object` named in `fields`, each a number.
Status
read_numbers(ObjectReader& object, std::initializer_list<std::pair<std::string_view, double*>> fields)
{
  for (const auto& [key, value] : fields) {
    PW_ASSIGN(*value, object.number(key));
  }
  return {};
}

Status
read_seconds(ObjectReader& root, engine::models::WorkloadReport& report)
{
  PW_ASSIGN(auto seconds, root.object("seconds"));
  PW_TRY(read_numbers(seconds, {{"first_result", &report.first_result_seconds},
                                {"first_result_device", &report.first_result_device_seconds},
                                {"first_result_host", &report.first_result_host_seconds},
                                {"session_open", &report.session_open_seconds},
                                {"compile", &report.compile_seconds},
                                {"execute", &report.execute_seconds},
                                {"total", &report.total_seconds}}));
  return seconds.finish();
}

Status
read_accuracy(ObjectReader& root, engine::models::WorkloadReport& report)
{
  PW_ASSIGN(auto accuracy, root.object("accuracy"));
  PW_TRY(read_numbers(accuracy, {{"max_abs_error", &report.max_abs_error},
                                 {"max_rel_error", &report.max_rel_error},
                                 {"tolerance_abs", &report.tolerance_abs},
                                 {"tolerance_rel", &report.tolerance_rel}}));
  PW_TRY(accuracy.count("op_checks")); // the sum over forward_passes
  PW_ASSIGN(const auto* passes, accuracy.array("forward_passes"));
  for (std::size_t i = 0; i < passes->size(); ++i) {
    PW_ASSIGN(auto pass, ObjectReader::open((*passes)[i], fmt::format("{}[{}]", accuracy.path_of("forward_passes"), i),
                                            accuracy.source()));
    engine::models::OutputCheck check;
    PW_ASSIGN(check.name, pass.string("name"));
    PW_ASSIGN(check.op_checks, pass.count("op_checks"));
    PW_ASSIGN(check.max_abs_error, pass.number("max_abs_error"));
    PW_ASSIGN(check.max_rel_error, pass.number("max_rel_error"));
    PW_ASSIGN(check.passed, pass.boolean("passed"));
    PW_TRY(pass.finish());
    report.checks.push_back(std::move(check));
  }
  return accuracy.finish();
}

Status
read_store_and_aot(ObjectReader& root, engine::models::WorkloadReport& report)
{
  PW_ASSIGN(auto store, root.object("program_store"));
  PW_ASSIGN(report.program_store, store.string("path"));
  PW_ASSIGN(report.store.hits, store.count("hits"));
  PW_ASSIGN(report.store.misses, store.count("misses"));
  PW_ASSIGN(report.store.rejected, store.count("rejected"));
  PW_ASSIGN(report.store.captured, store.count("captured"));
  PW_TRY(store.finish());
  PW_ASSIGN(auto aot, root.object("aot"));
  PW_ASSIGN(report.aot_served, aot.count("served"));
  PW_ASSIGN(report.aot_fallbacks, aot.count("fallbacks"));
  PW_ASSIGN(report.aot_programs, aot.strings("programs"));
  return aot.finish();
}

Result<engine::models::WorkloadReport>
read_report(ObjectReader& root)
{
  engine::models::WorkloadReport report;
  PW_ASSIGN(report.model, root.string("model"));
  PW_ASSIGN(const auto precision, root.string("precision"));
  const auto parsed = model::parse_precision(precision);
  if (!parsed) {
    return fail(
      ObjectReader::field_error(root.source(), "precision", fmt::format("unknown precision '{}'", precision)));
  }
  report.precision = *parsed;
  PW_TRY(read_device(root, report));
  PW_ASSIGN(report.representative, root.choice<bool>("coverage", {{"representative", true}, {"full", false}}));
  PW_ASSIGN(const auto layers_run, root.integer("layers_run", 0, std::numeric_limits<int>::max()));
  PW_ASSIGN(const auto layers_in_model, root.integer("layers_in_model", 0, std::numeric_limits<int>::max()));
  report.layers_run = static_cast<int>(layers_run);
  report.layers_in_model = static_cast<int>(layers_in_model);
  PW_ASSIGN(report.variants, root.strings("variants"));
  PW_ASSIGN(report.launches, root.count("launches"));
  PW_TRY(read_seconds(root, report));
  PW_TRY(read_accuracy(root, report));
  PW_TRY(read_store_and_aot(root, report));
  PW_ASSIGN(report.peak_device_bytes, root.count("peak_device_bytes"));
  PW_ASSIGN(report.notes, root.string("notes"));
  PW_TRY(root.finish());
  return report;
}

} // namespace

Result<engine::models::WorkloadReport>
parse_job_report(std::string_view text, std::string_view source_name)
{
  const jobs::JsonSource source{"job report", std::string(source_name),
                                "written by `prewarm run-job` of this build; a report from another prewarm build "
                                "is not read"};
  auto read = [&]() -> Result<engine::models::WorkloadReport> {
    PW_ASSIGN(const auto document, jobs::parse_json_document(text, source));
    PW_ASSIGN(auto root, ObjectReader::open(document, "", source));
    return read_report(root);
  };
  auto report = read();
  if (!report) {
    // The parent's job failed, not its usage: exit 1 like any failed job.
    return fail(Error(Errc::failed, report.error().message(), "E_JOB_REPORT"));
  }
  return report;
}

Result<engine::models::WorkloadReport>
load_job_report(const std::filesystem::path& file)
{
  PW_ASSIGN_CTX(const auto text, "reading the job report", read_file(file.string(), k_report_max_bytes));
  return parse_job_report(text, file.string());
}

} // namespace prewarm::builtin
