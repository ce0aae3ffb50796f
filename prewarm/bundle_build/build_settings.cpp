// SPDX-License-Identifier: Apache-2.0
#include "bundle_build/build_settings.hpp"

#include "aot/toolchains.hpp"

#include "bundle_build/job_logs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

namespace prewarm::bundle_build {

namespace {

std::string
environment_or(const char* name, std::string_view otherwise)
{
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : std::string(otherwise);
}

std::string
flag_or(bool given, std::string flag, std::string otherwise)
{
  return given ? flag : otherwise;
}

} // namespace

std::vector<Setting>
resolved_settings(const BuildRequest& request, const BuildOptions& options, const BuildInputs& inputs,
                  const BundleHeader& header)
{
  std::vector<Setting> out;
  const auto& args = request;
  out.push_back({"manifest", inputs.manifest.source_name, flag_or(!args.manifest_file.empty(), "argument", "default")});
  out.push_back({"targets", args.targets_file.empty() ? "<embedded targets.yaml>" : args.targets_file,
                 flag_or(!args.targets_file.empty(), "--targets", "default")});
  out.push_back(
    {"channel", header.channel, flag_or(options.channel.has_value(), "--channel", inputs.manifest.source_name)});
  out.push_back({"serial", std::to_string(header.serial.value), header.serial.origin});
  const auto& epoch = header.source_date_epoch;
  out.push_back({"issued-at", epoch ? format_rfc3339(*epoch) : "the build time",
                 epoch ? "environment SOURCE_DATE_EPOCH" : "default"});
  out.push_back({"expires", inputs.manifest.bundle.expires_text + " after issued-at", inputs.manifest.source_name});
  out.push_back({"key", args.key_files.empty() ? "(none)" : fmt::format("{}", fmt::join(args.key_files, " ")),
                 flag_or(!args.key_files.empty(), "--key", "default")});
  out.push_back({"out", args.out.empty() ? "(none)" : args.out, flag_or(!args.out.empty(), "--out", "default")});
  const auto log_dir = !args.log_dir.empty() ? std::filesystem::path(args.log_dir)
                       : !args.out.empty()   ? default_log_dir(args.out)
                                             : std::filesystem::path();
  out.push_back({"log-dir", log_dir.empty() ? "(none)" : log_dir.string(),
                 flag_or(!args.log_dir.empty(), "--log-dir", "default: <out>.logs")});
  out.push_back({"json", args.json_file.empty() ? "(none)" : args.json_file,
                 flag_or(!args.json_file.empty(), "--json", "default")});
  out.push_back({"capture-root", args.capture_root.empty() ? "(none: each job's work directory)" : args.capture_root,
                 flag_or(!args.capture_root.empty(), "--capture-root", "default")});
  out.push_back({"shard", options.shard.to_string(), flag_or(args.shard != "1/1", "--shard", "default")});
  out.push_back({"jobs", std::to_string(args.parallel_jobs), flag_or(args.parallel_jobs != 1, "--jobs", "default")});
  out.push_back(
    {"keep-going", args.keep_going ? "true" : "false", flag_or(args.keep_going, "--keep-going", "default")});
  out.push_back({"progress", std::string(to_string(options.progress.mode)), options.progress.mode_origin});
  out.push_back(
    {"progress-interval", fmt::format("{} ms", options.progress.interval.count()), options.progress.interval_origin});
  const bool ocloc_set = std::getenv("PREWARM_OCLOC") != nullptr;
  out.push_back({"ocloc", environment_or("PREWARM_OCLOC", "per target, the first that knows it: ocloc in PATH, the Intel root's"),
                 ocloc_set ? "environment PREWARM_OCLOC" : "default"});
  const bool root_set = std::getenv(std::string(aot::k_intel_root_variable).c_str()) != nullptr;
  const auto root = aot::intel_root();
  out.push_back({"intel-root",
                 root.empty()                        ? std::string("none")
                 : aot::intel_root_complete(root) ? root.string()
                                                     : root.string() + " (not made: ./setup.sh intel-root)",
                 root_set ? "environment PREWARM_INTEL_ROOT" : "default"});
  const bool double_set = std::getenv("PREWARM_HOST_DEVICES") != nullptr;
  out.push_back({"host-devices", environment_or("PREWARM_HOST_DEVICES", "probed (OpenCL, nvidia-smi, sysfs)"),
                 double_set ? "environment PREWARM_HOST_DEVICES (test double)" : "default"});
  return out;
}

std::string
format_settings(const std::vector<Setting>& settings)
{
  std::size_t width = 0;
  for (const auto& s : settings) {
    width = std::max(width, s.origin.size() + 2);
  }
  std::string out;
  for (const auto& s : settings) {
    out += fmt::format("{:<{}} {} = {}\n", "(" + s.origin + ")", width, s.name, s.value);
  }
  return out;
}

} // namespace prewarm::bundle_build
