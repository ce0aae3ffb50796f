// SPDX-License-Identifier: Apache-2.0
// One command workload job: run a program (a warm-up script) with every
// selected cache redirected into staging, then report what it captured and
// what that depends on. The build's executor turns a successful result into
// slices; a failed job leaves nothing behind to package.
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/cache_kind.hpp"
#include "command/cache_capture.hpp"
#include "command/capture_root.hpp"
#include "command/hit_proof.hpp"
#include "command/identity.hpp"
#include "command/subprocess.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::command {

// A manifest's `command:` workload, independent of the YAML that held it.
struct CommandWorkload
{
  std::vector<std::string> argv;                // "{precision}" is replaced per job
  std::filesystem::path working_directory;      // empty: the builder's; "{precision}" too
  std::map<std::string, std::string> environment; // added to the builder's; "{precision}" in values
  std::chrono::seconds timeout{0};              // 0: no limit
  ShellMode shell = ShellMode::direct;
  std::vector<CacheKind> kinds;                 // empty: every known kind, unless:
  bool no_builtin_kinds = false;                // only the custom caches (manifest `kinds: []`)
  std::vector<CustomCacheRequest> custom_caches; // custom_capture.hpp
  VerifyMode verify = VerifyMode::warn;         // the hit proof (hit_proof.hpp)
};

// "{precision}" -> precision, in one string. Other braces are left alone
// (a `python -c` program may hold dict literals).
std::string expand_template(std::string_view text, std::string_view precision);

struct CommandJobRequest
{
  std::string job_id;               // stable id from the plan, e.g. "cpu/pyopencl/fp32"
  CommandWorkload workload;
  std::string precision;            // "fp32", "fp16", "int8"
  std::filesystem::path work_dir;   // an existing empty directory owned by this job
  std::filesystem::path log_file;   // the program's full output; empty: <work_dir>/command.log
  HomeMode home = HomeMode::private_home;
  // Empty: the caches are captured in work_dir. Else the install root the
  // bundle is meant for (capture_root.hpp): absent or empty, held by this job
  // while it runs and left as it was found.
  std::filesystem::path capture_root;
  // The OpenCL devices of this host as runtime/opencl reports them (pocl,
  // neo and sycl identity); null: none known.
  std::function<std::vector<DeviceProperties>()> list_opencl_devices;
  // The NVIDIA GPUs of this host; null: probe_nvidia_gpus().
  std::function<std::vector<DeviceProperties>()> list_nvidia_gpus;
  // Framework versions as slice requirements or only in the job line (identity.hpp).
  FrameworkRequirements frameworks = FrameworkRequirements::required;
};

// Captured kinds that share one requirement list: one slice each.
struct SliceGroup
{
  std::vector<CacheKind> kinds;
  std::vector<std::string> custom_caches; // names, under staging/custom/
  std::vector<bundle::Requirement> requirements;
  // Where the frameworks the requirements name were found: the installer
  // reads their versions there (host/framework_probe.hpp).
  std::vector<std::string> site_packages = {};
};

struct CommandJobResult
{
  std::string job_id;
  std::vector<std::string> argv; // after templating
  SubprocessResult run;
  std::chrono::steady_clock::duration total_duration{}; // the whole job: capture run, hit proof, collection
  std::chrono::seconds timeout{0};
  std::filesystem::path log_file;       // full output of the program
  std::filesystem::path staging_root;   // <kind>/... ; removed when the job failed
  CaptureSummary capture;
  std::vector<KindIdentity> identities; // captured (non-empty) kinds only
  std::vector<bundle::Requirement> custom_requirements; // of the captured custom caches
  std::map<std::string, std::string, std::less<>> frameworks;
  std::vector<std::string> site_packages; // where they were found (framework_probe.hpp)
  std::vector<std::string> warnings;    // traps, probe problems, empty capture, misses
  VerifyMode verify = VerifyMode::warn;
  std::optional<HitProof> hit_proof;    // when verify != off and something was captured
  std::filesystem::path hit_proof_log;  // the re-run's output

  // verify: require, and the proof did not hit: what missed and why.
  std::optional<std::string> required_proof_failure() const;
  // The capture holds what no slice can carry (capture.refusals): the job
  // fails, naming each path and the rule, and nothing of it is packaged.
  std::optional<std::string> packing_failure() const;

  bool succeeded() const { return run.succeeded(); }
  // "command cpu/pyopencl/fp32: /usr/bin/python3 warmup.py" (bundle "job"
  // line), with the probed framework versions when there are any:
  // "command h100/tiny/fp16 [torch 2.11.0, triton 3.6.0]: python3 ...".
  std::string job_line() const;
  // Kinds grouped by identical requirements: a cuda cache needs the exact
  // driver, a Triton cache the framework versions; separate slices let a host
  // use one even when it does not match the other.
  std::vector<SliceGroup> slice_groups() const;
  // Human report: outcome, duration, bytes and files per kind, identity,
  // warnings, and the log tail when the job failed.
  std::string report() const;
};

// Runs the job. An error means it could not run at all (bad work dir, the
// program does not exist); a program that fails gives a result with
// succeeded() == false whose staging directory has already been removed.
Result<CommandJobResult> run_command_job(const CommandJobRequest& request);

} // namespace prewarm::command
