// SPDX-License-Identifier: Apache-2.0
#include "bundle_build/build_command.hpp"

#include "aot/aot_executor.hpp"
#include "aot/recorded_aot_executor.hpp"
#include "virtual_device/virtual_command.hpp"
#include "virtual_device/virtual_device_executor.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "bundle_build/build_runner.hpp"
#include "bundle_build/build_settings.hpp"
#include "bundle_build/bundle_header.hpp"
#include "bundle_build/host_capabilities.hpp"
#include "bundle_build/job_logs.hpp"
#include "bundle_build/output_preflight.hpp"
#include "builtin/builtin_executor.hpp"
#include "builtin/child_process.hpp"
#include "command/capture_root.hpp"
#include "command/command_executor.hpp"
#include "pack/bundle_expiry.hpp"
#include "pack/bundle_writer.hpp"
#include "pack/key_pair.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <memory>

namespace prewarm::bundle_build {
namespace {

std::filesystem::path
absolute_path(const std::string& path)
{
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec);
  return ec ? std::filesystem::path(path) : absolute;
}

Result<BuildOptions>
build_options(const BuildRequest& request)
{
  BuildOptions options;
  if (!request.manifest_file.empty()) {
    options.manifest_file = request.manifest_file;
  }
  if (!request.targets_file.empty()) {
    options.targets_file = request.targets_file;
  }
  PW_ASSIGN(options.shard, manifest::Shard::parse(request.shard));
  options.parallel_jobs = request.parallel_jobs;
  options.on_failure = request.keep_going ? FailurePolicy::keep_going : FailurePolicy::stop;
  if (!request.channel.empty()) {
    options.channel = request.channel;
  }
  if (request.serial != 0) {
    options.serial = request.serial;
  }
  // Absolute: job children run in their own working directories, and the
  // "full log:" lines are to be found from anywhere.
  if (!request.log_dir.empty()) {
    options.log_dir = absolute_path(request.log_dir);
  } else if (!request.out.empty()) {
    options.log_dir = default_log_dir(absolute_path(request.out));
  }
  PW_ASSIGN(options.progress, progress_options_from_environment());
  return options;
}

// Everything the build will write, checked before a job runs (item by item,
// so the message names the one to fix).
Status
check_outputs(const BuildRequest& request, const std::filesystem::path& log_dir)
{
  if (request.key_files.empty() || request.out.empty()) {
    return fail(
      Errc::usage,
      fmt::format("build: {} required (prewarm build [MANIFEST] --key NAME.key --out BUNDLE; make a key "
                  "with `prewarm keygen --out keys/NAME`)",
                  request.key_files.empty() ? (request.out.empty() ? "--key and --out are" : "--key is") : "--out is"),
      "E_USAGE");
  }
  PW_TRY(check_output_path(request.out, OutputKind::bundle_directory, "--out"));
  if (!request.json_file.empty()) {
    PW_TRY(check_output_path(request.json_file, OutputKind::file, "--json"));
  }
  PW_TRY(check_output_path(log_dir, OutputKind::directory,
                           request.log_dir.empty() ? "the job log directory (--log-dir)" : "--log-dir"));
  if (!request.capture_root.empty()) {
    PW_TRY(command::check_capture_root(request.capture_root, "--capture-root"));
  }
  return {};
}

Result<std::vector<pack::PrivateKey>>
load_keys(const std::vector<std::string>& files)
{
  std::vector<pack::PrivateKey> keys;
  for (const auto& file : files) {
    PW_ASSIGN(auto key, pack::PrivateKey::load(file));
    keys.push_back(std::move(key));
  }
  return keys;
}

// The executor that runs the jobs the plan gives `kind`; null: none in this
// build. Where an Intel root is, the virtual device serves the aot and
// recorded aot jobs: it runs the AOT executor itself and adds the target's
// NEO slice.
// `intel_targets`: whether the manifest names an Intel target, the only
// one the virtual device serves, and the host has the helper programs it
// runs (a CPU-only build neither looks for the device nor warns that its
// helpers are missing; the plan names them for the jobs that need them).
std::unique_ptr<jobs::Executor>
make_executor(manifest::ExecutorKind kind, const BuildRequest& request, const std::filesystem::path& self,
              bool intel_targets)
{
  const auto compile_jobs = static_cast<unsigned>(std::max(1, request.parallel_jobs));
  switch (kind) {
  case manifest::ExecutorKind::none:
    return nullptr;
  case manifest::ExecutorKind::builtin:
    return std::make_unique<builtin::BuiltinExecutor>(builtin::BuiltinExecutorOptions{self});
  case manifest::ExecutorKind::command: {
    command::CommandExecutorOptions options;
    options.capture_root = request.capture_root;
    return std::make_unique<command::CommandExecutor>(std::move(options));
  }
  case manifest::ExecutorKind::aot: {
    if (!intel_targets) {
      return std::make_unique<aot::AotExecutor>(aot::AotExecutorOptions{compile_jobs});
    }
    auto virtual_device = std::make_unique<virtual_device::VirtualDeviceExecutor>(aot::AotExecutorOptions{compile_jobs});
    if (virtual_device->available()) {
      return virtual_device;
    }
    return std::make_unique<aot::AotExecutor>(aot::AotExecutorOptions{compile_jobs});
  }
  case manifest::ExecutorKind::virtual_command: {
    if (!intel_targets) {
      return nullptr;
    }
    auto virtual_command = std::make_unique<virtual_device::VirtualCommandExecutor>(compile_jobs);
    return virtual_command->available() ? std::move(virtual_command) : nullptr;
  }
  case manifest::ExecutorKind::recorded_aot: {
    if (!intel_targets) {
      return std::make_unique<aot::RecordedAotExecutor>(aot::RecordedAotOptions{compile_jobs});
    }
    auto virtual_recorded =
      std::make_unique<virtual_device::VirtualRecordedExecutor>(aot::RecordedAotOptions{compile_jobs});
    if (virtual_recorded->available()) {
      return virtual_recorded;
    }
    return std::make_unique<aot::RecordedAotExecutor>(aot::RecordedAotOptions{compile_jobs});
  }
  }
  return nullptr;
}

Result<ExecutorTable>
make_executors(const BuildRequest& request, const BuildInputs& inputs, const manifest::HostCapabilities& host)
{
  PW_ASSIGN(const auto self, builtin::self_executable());
  bool intel_targets = std::ranges::any_of(inputs.manifest.targets, [&](const std::string& name) {
    const auto* target = inputs.registry.find(name);
    return target != nullptr && target->vendor == manifest::Vendor::intel;
  });
  if (intel_targets && !host.virtual_device_missing.empty()) {
    // Once for the build; the plan's reasons say it per job.
    log::warn("virtual Intel devices not used: {}", fmt::join(host.virtual_device_missing, "; "));
    intel_targets = false;
  }
  ExecutorTable executors;
  for (std::size_t i = 0; i < manifest::k_executor_kinds; ++i) {
    const auto kind = static_cast<manifest::ExecutorKind>(i);
    executors[kind] = make_executor(kind, request, self, intel_targets);
  }
  return executors;
}

Status
make_parent_directories(const std::filesystem::path& file)
{
  std::error_code ec;
  if (file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), ec);
  }
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", file.parent_path().string(), ec.message()));
  }
  return {};
}

// The --json report (also when a failed job stops the build), the summary,
// and the bundle from the jobs' slices.
Status
write_outputs(const BuildRequest& request, const BuildResult& result, const std::vector<pack::PrivateKey>& keys,
              const std::string& log_dir_shown)
{
  if (!request.json_file.empty()) {
    const auto what = fmt::format("writing the report {}", request.json_file);
    PW_TRY_CTX(what, make_parent_directories(request.json_file));
    PW_TRY_CTX(what, write_file_atomic(request.json_file, result.to_json() + "\n", 0644, Durability::none));
  }
  // A CI user reads the report for the failed job, so it is written first.
  if (const auto stop = result.stop_error()) {
    return fail(Errc::failed, *stop);
  }
  log::info("{}", result.summary());
  log::info("job logs: {}/", log_dir_shown);
  if (result.spec.slices.empty()) {
    return fail(Errc::failed, fmt::format("no job produced a cache, so there is nothing to package; no bundle "
                                          "written ({}; job logs in {}/)",
                                          result.summary(), log_dir_shown));
  }
  PW_ASSIGN(const auto written, pack::write_bundle(result.spec, keys, request.out));
  fmt::print("{}  {}/manifest\n", written.manifest_sha256, written.dir.string());
  if (result.failed > 0) {
    return fail(Errc::failed, fmt::format("{} of {} jobs failed (the bundle {} holds the others; job logs in {}/)",
                                          result.failed, result.records.size(), written.dir.string(), log_dir_shown));
  }
  return {};
}

} // namespace

Status
build_bundle(const BuildRequest& request)
{
  PW_ASSIGN(const auto options, build_options(request));
  // Messages name the log directory as the user would type it.
  const auto log_dir_shown =
    (!request.log_dir.empty() ? std::filesystem::path(request.log_dir) : default_log_dir(request.out)).string();

  // Everything that can be wrong with the inputs is found before a job runs.
  PW_ASSIGN(const auto inputs, load_build_inputs(options));
  const auto now = now_seconds();
  PW_ASSIGN(const auto header, decide_bundle_header(options.channel, options.serial, inputs.manifest, now));
  if (request.show_config) {
    fmt::print("{}", format_settings(resolved_settings(request, options, inputs, header)));
    return {};
  }
  PW_TRY(check_outputs(request, log_dir_shown));
  PW_ASSIGN(const auto keys, load_keys(request.key_files));
  PW_TRY(pack::check_bundle_expiry("the bundle", header.issued_at, header.expires, now,
                                   request.allow_expired ? pack::ExpiryPolicy::warn : pack::ExpiryPolicy::refuse));
  const auto host = probe_host_capabilities(inputs.registry);
  PW_ASSIGN(auto executors, make_executors(request, inputs, host));

  log::info("building {} ({} targets, {} models, {} precisions) on this host, shard {}; job logs in {}",
            inputs.manifest.source_name, inputs.manifest.targets.size(), inputs.manifest.models.size(),
            inputs.manifest.precisions.size(), options.shard.to_string(), log_dir_shown);
  PW_ASSIGN(const auto result, run_build(options, inputs, header, host, executors));
  return write_outputs(request, result, keys, log_dir_shown);
}

} // namespace prewarm::bundle_build
