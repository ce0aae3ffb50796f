// SPDX-License-Identifier: Apache-2.0
// One representative inference: what `prewarm run` prints and what
// `prewarm build` runs for each builtin job. It opens a Session on the chosen
// device (programs through the program store when one is given), runs the
// model's forward passes (engine/ops: decoder, CNN, GPTQ stack) at the
// requested shapes, each op output checked against its CPU reference (a
// mismatch fails the job: a cache that yields wrong answers is worse than
// none), captures the programs after the last launch, and reports what ran.
//   decoder  per batch size x prefill length: prefill + decode_steps greedy
//            steps; representative = 1 layer (all layers share one shape) and
//            a vocabulary capped at 4096 rows; full = every layer, whole vocabulary
//   cnn      per batch size: every layer (a CNN's layers differ in shape)
//   gptq     per batch size x prefill length rows: every layer; fp16, bf16 or fp32
//            activations (int8 is refused: the weights are 4-bit)
//
// The caller sets the driver cache variables (POCL_CACHE_DIR, CUDA_CACHE_PATH,
// NEO_CACHE_DIR ...) in the process environment before calling; this never
// changes the environment.
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"
#include "engine/ops/model_names.hpp"
#include "engine/session.hpp"
#include "store/program_store.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace prewarm::engine::models {

struct WorkloadRequest
{
  ModelArchitecture model;
  Precision precision = Precision::fp32;
  Shapes shapes;
  Coverage coverage = Coverage::representative;
  std::string device_selector;         // see SessionOptions
  std::filesystem::path program_store; // empty = no store
  store::StoreMode store_mode = store::StoreMode::read_write;
  Backend backend = Backend::opencl;
  SpirvCompiler spirv_compiler;        // Level Zero only, see SessionOptions
};

// One checked forward pass: every op output in it was compared with its CPU
// reference (a mismatch ends the run with E_OP_MISMATCH before a report).
struct OutputCheck
{
  std::string name; // "decoder batch=1 prefill=16 decode=2"
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool passed = false;
  std::size_t op_checks = 0; // op outputs compared
};

struct WorkloadReport
{
  std::string model;
  Precision precision = Precision::fp32;
  Backend backend = Backend::opencl;
  std::string device_description;
  DeviceProperties device_properties;
  std::vector<std::string> variants; // distinct (kernel, defines, local size) launched
  std::uint64_t launches = 0;
  double compile_seconds = 0;
  double execute_seconds = 0;
  // From the start of run_workload (before the device is opened) to the end
  // of the first forward pass (first batch size x prefill length, its decode
  // steps included), every op output in it checked: CPU reference time is
  // part of it.
  double first_result_seconds = 0;
  // The device path of that same first result, measured by construction: the
  // session open (platform, device, context, queue) plus the Session's
  // compile and execute time (program builds, kernel creation, enqueue,
  // finish, transfers; PoCL's per-local-size code generation at the first
  // enqueue included) up to the end of the first forward pass. What a real
  // engine, which loads its weights from disk and runs no CPU reference,
  // would wait for.
  double first_result_device_seconds = 0;
  double session_open_seconds = 0;
  // first_result_seconds - first_result_device_seconds: host work of this
  // synthetic engine before the first result (seeded weight and input
  // generation, CPU references, output comparisons, host-side bookkeeping).
  double first_result_host_seconds = 0;
  double total_seconds = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  double tolerance_abs = 0;
  double tolerance_rel = 0;
  std::vector<OutputCheck> checks;
  store::StoreCounters store;
  std::string program_store; // path, or empty
  // Ahead-of-time binaries (store/aot_loader.hpp), when the store has any:
  // which path served each program ("aot acm-g11 <key>" or "fallback: why").
  std::vector<std::string> aot_programs;
  std::uint64_t aot_served = 0;
  std::uint64_t aot_fallbacks = 0;
  std::size_t peak_device_bytes = 0;
  bool representative = true; // Coverage::representative: one layer per distinct layer shape
  int layers_run = 0;         // per forward pass
  int layers_in_model = 0;
  std::string notes;
};

nlohmann::json to_json(const WorkloadReport& report);
std::string to_text(const WorkloadReport& report);

// A failed check is an error (E_OP_MISMATCH) that names the forward pass, the
// op and the errors; device and build failures come back as they are.
Result<WorkloadReport> run_workload(const WorkloadRequest& request);

} // namespace prewarm::engine::models
