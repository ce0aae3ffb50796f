// SPDX-License-Identifier: Apache-2.0
// Program creation, builds, separate compilation and linking, and the
// program queries, as the layer serves and records them. Whatever fails on
// the layer's side (no record, a corrupt record, a binary the driver refuses)
// ends in the application's own call made as it asked: the application sees
// the driver's result, the operator sees why (layer_log.hpp).
//
// Capture points (record mode): right after a successful build, compile or
// link (the final binary for drivers that compile everything up front, such
// as NVIDIA's and Intel's), and again at the application's last
// clReleaseProgram, when PoCL 3.1's binary also holds the work-group
// functions it generated lazily at the kernels' first enqueues
// (interception.md §3). Never at exit: by then PoCL's LLVM may be torn down
// (measured crash), so a release that happens after exit() began is not
// captured.
// PoCL 3.1 serialises a program's binary at the first CL_PROGRAM_BINARIES
// query and returns those same bytes ever after, so a capture after the
// build would freeze out the lazily generated code (measured here with
// layer_test_app: 63 KB after build and again at release, 94 KB at release
// alone; served 0.94 s vs 0.27 s). On PoCL the layer captures at release
// only, unless PREWARM_LAYER_CAPTURE says otherwise; a PoCL program released
// only at exit is not recorded (the pocl cache kind covers it), except that
// the application's clReleaseContext, its last word before exit in most
// programs (CLBlast's clients: CLBlast keeps its programs until exit), is a
// capture point for the context's programs that are still alive. An
// application may still have frozen the binary itself by reading it after
// the build (CLBlast, hashcat): a release capture on PoCL therefore reads a
// second program's binary (program_binaries.hpp).
#include "layer/layer_calls.hpp"

#include "base/digest.hpp"
#include "layer/aot_binaries.hpp"
#include "layer/cl_query.hpp"
#include "layer/device_identity.hpp"
#include "layer/layer_log.hpp"
#include "layer/layer_settings.hpp"
#include "layer/next_dispatch.hpp"
#include "layer/program_binaries.hpp"
#include "layer/program_table.hpp"
#include "store/program_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace prewarm::layer {
namespace {

using Clock = std::chrono::steady_clock;
using Callback = void(CL_CALLBACK*)(cl_program, void*);

std::atomic<bool> g_exiting{false};

void
mark_exiting()
{
  g_exiting.store(true);
}

double
ms_since(Clock::time_point start)
{
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string
short_key(const std::string& key)
{
  return key.substr(0, 12);
}

// --- queries through the next dispatch -------------------------------------

std::vector<cl_device_id>
program_devices(cl_program program)
{
  return query_array<cl_device_id>(
    [&](std::size_t n, void* v, std::size_t* r) { return next().clGetProgramInfo(program, CL_PROGRAM_DEVICES, n, v, r); });
}

std::vector<cl_device_id>
context_devices(cl_context context)
{
  return query_array<cl_device_id>(
    [&](std::size_t n, void* v, std::size_t* r) { return next().clGetContextInfo(context, CL_CONTEXT_DEVICES, n, v, r); });
}

cl_uint
program_reference_count(cl_program program)
{
  cl_uint count = 0;
  next().clGetProgramInfo(program, CL_PROGRAM_REFERENCE_COUNT, sizeof count, &count, nullptr);
  return count;
}

std::vector<std::string>
kernel_names(cl_program program)
{
  const auto names = query_string(
    [&](std::size_t n, void* v, std::size_t* r) { return next().clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, n, v, r); });
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < names.size()) {
    auto end = names.find(';', start);
    if (end == std::string::npos) {
      end = names.size();
    }
    if (end > start) {
      out.push_back(names.substr(start, end - start));
    }
    start = end + 1;
  }
  return out;
}

std::string
build_log(cl_program program, cl_device_id device)
{
  return query_string([&](std::size_t n, void* v, std::size_t* r) {
    return next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, v, r);
  });
}

bool
built_everywhere(cl_program program, const std::vector<cl_device_id>& devices)
{
  for (const auto device : devices) {
    cl_build_status status = CL_BUILD_NONE;
    if (next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS ||
        status != CL_BUILD_SUCCESS) {
      return false;
    }
  }
  return true;
}

std::vector<std::string>
device_names(const std::vector<cl_device_id>& devices)
{
  std::vector<std::string> names;
  for (const auto device : devices) {
    names.push_back(identity_of(device).device);
  }
  return names;
}

std::vector<std::string>
key_digests(const std::vector<store::ProgramKey>& keys)
{
  std::vector<std::string> out;
  for (const auto& key : keys) {
    out.push_back(key.digest());
  }
  return out;
}

// --- keys ------------------------------------------------------------------

std::string
spec_constant_field(const std::vector<SpecConstant>& constants)
{
  auto sorted = constants;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::string field;
  for (const auto& c : sorted) {
    field += fmt::format("{}{}={}", field.empty() ? "" : ",", c.id, sha256_hex(c.value));
  }
  return field;
}

std::vector<std::pair<std::string, std::string>>
payload_fields(const TrackedProgram& tracked)
{
  std::vector<std::pair<std::string, std::string>> fields;
  if (!tracked.spec_constants.empty()) {
    fields.emplace_back("spec-constants", spec_constant_field(tracked.spec_constants));
  }
  return fields;
}

std::vector<store::ProgramKey>
build_keys(const TrackedProgram& tracked, const std::vector<cl_device_id>& devices, std::string_view stage, std::string_view options,
           const std::vector<std::pair<std::string, std::string>>& more = {})
{
  std::vector<store::ProgramKey> keys;
  for (const auto device : devices) {
    auto fields = payload_fields(tracked);
    fields.insert(fields.end(), more.begin(), more.end());
    keys.push_back(layer_key(device, stage, tracked.kind, tracked.payload_sha256, options, std::move(fields)));
  }
  return keys;
}

// Reads every device's record; the first failure is the reason.
struct StoredBinaries
{
  std::vector<std::string> binaries;
  std::string reason; // empty when every device has a record
};

StoredBinaries
read_records(const std::vector<store::ProgramKey>& keys)
{
  StoredBinaries out;
  for (const auto& key : keys) {
    auto binary = store::read_record(settings().store, key);
    if (!binary) {
      out.reason = binary.error().code() == "E_STORE_ABSENT"
                     ? std::string("not in the store")
                     : fmt::format("stored record {} rejected: {}", short_key(key.digest()), binary.error().message());
      out.binaries.clear();
      return out;
    }
    out.binaries.push_back(std::move(*binary));
  }
  return out;
}

// Zebins compiled ahead of time for every device (aot_binaries.hpp); the
// first device without one is the reason.
struct AotServing
{
  std::vector<std::string> binaries;
  std::string origin; // "AOT acm-g10 3f2a9c01b2d4"
  std::string reason;
  bool installed = true; // false: no AOT targets in the store
};

AotServing
aot_binaries(const std::vector<cl_device_id>& devices, std::string_view source, std::string_view options)
{
  AotServing out;
  for (const auto device : devices) {
    auto found = find_aot_binary(device, source, options);
    if (found.zebin.empty()) {
      out.reason = found.reason;
      out.installed = found.installed;
      out.binaries.clear();
      return out;
    }
    if (out.origin.empty()) {
      out.origin = fmt::format("AOT {} {}", found.target, short_key(found.key));
    }
    out.binaries.push_back(std::move(found.zebin));
  }
  return out;
}

// --- recording -------------------------------------------------------------

bool
capture_after_build(const std::vector<cl_device_id>& devices)
{
  if (!settings().capture_after_build) {
    return false;
  }
  if (settings().capture_explicit) {
    return true;
  }
  return std::none_of(devices.begin(), devices.end(), is_pocl);
}

// When a capture reads a program's binaries: right after its build, or once
// its kernels may have run (at release).
struct CapturePoint
{
  std::string_view name;
  bool after_enqueues;
};
constexpr CapturePoint k_after_build{"after build", false};
constexpr CapturePoint k_after_link{"after link", false};
constexpr CapturePoint k_at_release{"at release", true};
constexpr CapturePoint k_at_context_release{"at context release", true};

void
write_records(cl_program program, const TrackedProgram& tracked, CapturePoint capture)
{
  const auto when = capture.name;
  if (tracked.keys.empty()) {
    return;
  }
  // At release the program's kernels have run: on PoCL its binary may have
  // been frozen before they did (program_binaries.hpp).
  auto binaries = program_binaries(program);
  if (capture.after_enqueues && !tracked.compiled && tracked.spec_constants.empty()) {
    binaries = with_lazily_generated_code({tracked.context, tracked.kind, tracked.payload, tracked.build_options, tracked.link_inputs},
                                          std::move(binaries));
  }
  if (binaries.empty()) {
    operator_line(fmt::format("record ({}): cannot read the program's binaries; nothing stored", when));
    return;
  }
  for (std::size_t i = 0; i < tracked.key_devices.size(); ++i) {
    const auto it = std::find_if(binaries.begin(), binaries.end(), [&](const auto& b) { return b.first == tracked.key_devices[i]; });
    if (it == binaries.end() || it->second.empty()) {
      continue; // a device the build did not name has no binary
    }
    const auto& key = tracked.keys[i];
    const std::string_view source =
      tracked.kind == store::SourceKind::source && !tracked.compiled ? std::string_view(tracked.payload) : std::string_view{};
    if (auto stored = store::read_record(settings().store, key); stored && *stored == it->second) {
      continue; // nothing new since the last capture
    }
    if (auto written = store::write_record(settings().store, key, it->second, source); !written) {
      operator_line(fmt::format("record ({}): {}", when, written.error().message()));
    } else {
      operator_line(fmt::format("recorded {} ({}, {} bytes, {})", short_key(key.digest()), when, it->second.size(),
                                identity_of(tracked.key_devices[i]).device));
    }
  }
}

// A compile record holds the build log: a later run only needs to know that
// this compile succeeded, and what the application was told.
void
write_compile_records(cl_program program, const TrackedProgram& tracked)
{
  for (std::size_t i = 0; i < tracked.key_devices.size(); ++i) {
    const auto log = build_log(program, tracked.key_devices[i]);
    if (auto written = store::write_record(settings().store, tracked.keys[i], log); !written) {
      operator_line(fmt::format("record (compile): {}", written.error().message()));
    }
  }
}

// Drops a reference the layer took; when it was the last, the program is
// gone and so is what the layer knew of it (a later program may get the
// same handle).
void
release_held(cl_program program)
{
  if (program_reference_count(program) == 1) {
    ProgramTable::instance().take(program);
  }
  next().clReleaseProgram(program);
}

// --- serving ---------------------------------------------------------------

std::vector<cl_device_id>
devices_or(cl_uint count, const cl_device_id* list, std::vector<cl_device_id> fallback)
{
  if (count == 0 || list == nullptr) {
    return fallback;
  }
  return std::vector<cl_device_id>(list, list + count);
}

// Compiles a virtually compiled program for real (a link missed, or a query
// needs the driver's object). The application was told it compiled, so a
// failure here is reported by whatever call needed it.
cl_int
materialise(cl_program program)
{
  auto tracked = ProgramTable::instance().find(program);
  if (!tracked || !tracked->virtual_compile) {
    return CL_SUCCESS;
  }
  const auto& compile = *tracked->virtual_compile;
  std::vector<cl_program> headers;
  std::vector<const char*> names;
  for (const auto& header : compile.headers) {
    headers.push_back(header.program);
    names.push_back(header.name.c_str());
  }
  const auto status = next().clCompileProgram(program, static_cast<cl_uint>(compile.devices.size()), compile.devices.data(),
                                              compile.options.c_str(), static_cast<cl_uint>(headers.size()),
                                              headers.empty() ? nullptr : headers.data(), names.empty() ? nullptr : names.data(),
                                              nullptr, nullptr);
  operator_line(fmt::format("compiled a deferred compile for real ({}): status {}", short_key(tracked->keys.front().digest()), status));
  ProgramTable::instance().update(program, [](TrackedProgram& t) { t.virtual_compile.reset(); });
  for (const auto header : headers) {
    next().clReleaseProgram(header);
  }
  return status;
}

void
track_created(cl_program program, cl_context context, store::SourceKind kind, std::string payload)
{
  if (program == nullptr || settings().mode == LayerMode::off) {
    return;
  }
  TrackedProgram tracked;
  tracked.context = context;
  tracked.kind = kind;
  tracked.payload_sha256 = sha256_hex(payload);
  tracked.payload = std::move(payload);
  ProgramTable::instance().put(program, std::move(tracked));
}

// clCreateProgramWithILKHR as the ICD returned it (extension lookups).
std::atomic<clCreateProgramWithILKHR_fn> g_create_with_il_khr{nullptr};

cl_program CL_API_CALL
create_program_with_il_khr(cl_context context, const void* il, size_t length, cl_int* errcode_ret)
{
  const auto real = g_create_with_il_khr.load();
  if (real == nullptr) {
    if (errcode_ret != nullptr) {
      *errcode_ret = CL_INVALID_OPERATION;
    }
    return nullptr;
  }
  cl_program program = real(context, il, length, errcode_ret);
  if (il != nullptr) {
    track_created(program, context, store::SourceKind::il, std::string(static_cast<const char*>(il), length));
  }
  return program;
}

void*
wrap_extension(const char* name, void* function)
{
  if (function == nullptr || name == nullptr || settings().mode == LayerMode::off) {
    return function;
  }
  if (std::strcmp(name, "clCreateProgramWithILKHR") == 0) {
    g_create_with_il_khr.store(reinterpret_cast<clCreateProgramWithILKHR_fn>(function));
    return reinterpret_cast<void*>(&create_program_with_il_khr);
  }
  // An extension that takes a cl_program would see the application's unbuilt
  // handle instead of the shadow; none of the drivers here has one (PoCL
  // 3.1 exports none), so it is named for the operator rather than wrapped.
  operator_line(fmt::format("extension function {} passed through unwrapped", name));
  return function;
}

} // namespace

void
start_layer()
{
  static std::once_flag once;
  std::call_once(once, [] {
    // Registered at the first OpenCL call, after the ICDs (and PoCL's LLVM)
    // were loaded, so it runs before their teardown: from then on no
    // release is captured.
    std::atexit(mark_exiting);
    (void)settings();
  });
}

cl_program CL_API_CALL
create_program_with_source(cl_context context, cl_uint count, const char** strings, const size_t* lengths, cl_int* errcode_ret)
{
  cl_program program = next().clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  if (program != nullptr && strings != nullptr) {
    std::string source;
    for (cl_uint i = 0; i < count; ++i) {
      if (strings[i] == nullptr) {
        continue;
      }
      source += lengths != nullptr && lengths[i] != 0 ? std::string_view(strings[i], lengths[i]) : std::string_view(strings[i]);
    }
    track_created(program, context, store::SourceKind::source, std::move(source));
  }
  return program;
}

cl_program CL_API_CALL
create_program_with_il(cl_context context, const void* il, size_t length, cl_int* errcode_ret)
{
  cl_program program = next().clCreateProgramWithIL(context, il, length, errcode_ret);
  if (program != nullptr && il != nullptr) {
    track_created(program, context, store::SourceKind::il, std::string(static_cast<const char*>(il), length));
  }
  return program;
}

cl_int CL_API_CALL
set_program_specialization_constant(cl_program program, cl_uint id, size_t size, const void* value)
{
  const auto status = next().clSetProgramSpecializationConstant(program, id, size, value);
  if (status == CL_SUCCESS && value != nullptr) {
    ProgramTable::instance().update(program, [&](TrackedProgram& t) {
      std::erase_if(t.spec_constants, [id](const SpecConstant& c) { return c.id == id; });
      t.spec_constants.push_back({id, std::string(static_cast<const char*>(value), size)});
    });
  }
  return status;
}

cl_int CL_API_CALL
build_program(cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options, Callback notify,
              void* user_data)
{
  auto tracked = ProgramTable::instance().find(program);
  if (!tracked || tracked->shadow != nullptr) {
    return next().clBuildProgram(program, num_devices, device_list, options, notify, user_data);
  }
  const std::string options_text = options == nullptr ? "" : options;
  const auto devices = devices_or(num_devices, device_list, program_devices(program));
  const auto keys = build_keys(*tracked, devices, "build", options_text);

  std::string reason = "not served in record mode";
  if (settings().serves()) {
    const auto start = Clock::now();
    auto stored = read_records(keys);
    std::string origin = "the store";
    if (!stored.reason.empty() && tracked->kind == store::SourceKind::source) {
      // No record made on this device: an Intel GPU the build host did not
      // have may still have a zebin compiled ahead of time.
      auto aot = aot_binaries(devices, tracked->payload, options_text);
      if (aot.reason.empty()) {
        stored.binaries = std::move(aot.binaries);
        stored.reason.clear();
        origin = aot.origin;
      } else if (aot.installed) {
        stored.reason = fmt::format("{}; AOT: {}", stored.reason, aot.reason);
      }
    }
    reason = stored.reason;
    if (reason.empty()) {
      if (cl_program shadow = program_from_binaries(tracked->context, devices, stored.binaries, options, reason)) {
        ProgramTable::instance().update(program, [&](TrackedProgram& t) { t.shadow = shadow; });
        audit({.hit = true, .stage = "build", .keys = key_digests(keys), .devices = device_names(devices), .kernels = kernel_names(shadow),
               .build_ms = ms_since(start), .reason = {}, .origin = origin});
        operator_line(fmt::format("served {} from {}", short_key(keys.front().digest()), origin));
        if (notify != nullptr) {
          notify(program, user_data);
        }
        return CL_SUCCESS;
      }
    }
    operator_line(fmt::format("building {} normally: {}", short_key(keys.front().digest()), reason));
  }

  const auto start = Clock::now();
  const auto status = next().clBuildProgram(program, num_devices, device_list, options, notify, user_data);
  const double build_ms = ms_since(start);
  if (settings().serves()) {
    audit({.hit = false, .stage = "build", .keys = key_digests(keys), .devices = device_names(devices),
           .kernels = status == CL_SUCCESS ? kernel_names(program) : std::vector<std::string>{}, .build_ms = build_ms,
           .reason = status == CL_SUCCESS ? reason : fmt::format("{}; the build failed ({})", reason, status)});
  }
  if (settings().records() && status == CL_SUCCESS) {
    ProgramTable::instance().update(program, [&](TrackedProgram& t) {
      t.key_devices = devices;
      t.keys = keys;
      t.build_options = options_text;
      t.compiled = false;
      t.record_at_release = settings().capture_at_release;
    });
    // A build with a callback may still be running: only a finished one is
    // read now; the release capture covers the rest.
    if (capture_after_build(devices) && built_everywhere(program, devices)) {
      if (auto now = ProgramTable::instance().find(program)) {
        write_records(program, *now, k_after_build);
      }
    }
  }
  return status;
}

cl_int CL_API_CALL
compile_program(cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options, cl_uint num_headers,
                const cl_program* headers, const char** header_names, Callback notify, void* user_data)
{
  auto tracked = ProgramTable::instance().find(program);
  // Headers are part of the key: each must be a tracked source program.
  std::vector<std::pair<std::string, std::string>> header_fields;
  bool keyable = tracked.has_value() && tracked->kind == store::SourceKind::source;
  for (cl_uint i = 0; keyable && i < num_headers; ++i) {
    const auto header = ProgramTable::instance().find(headers[i]);
    if (!header || header_names == nullptr || header_names[i] == nullptr) {
      keyable = false;
      break;
    }
    header_fields.emplace_back("header", fmt::format("{} {}", header_names[i], header->payload_sha256));
  }
  if (!keyable) {
    return next().clCompileProgram(program, num_devices, device_list, options, num_headers, headers, header_names, notify, user_data);
  }
  const std::string options_text = options == nullptr ? "" : options;
  const auto devices = devices_or(num_devices, device_list, program_devices(program));
  const auto keys = build_keys(*tracked, devices, "compile", options_text, header_fields);

  std::string reason = "not served in record mode";
  if (settings().serves()) {
    auto stored = read_records(keys);
    reason = stored.reason;
    if (reason.empty()) {
      // Deferred: nothing is compiled unless a link misses.
      VirtualCompile compile{devices, options_text, {}, stored.binaries.front()};
      for (cl_uint i = 0; i < num_headers; ++i) {
        next().clRetainProgram(headers[i]);
        compile.headers.push_back({headers[i], header_names[i]});
      }
      ProgramTable::instance().update(program, [&](TrackedProgram& t) {
        t.virtual_compile = std::move(compile);
        t.key_devices = devices;
        t.keys = keys;
        t.compiled = true;
      });
      audit({.hit = true, .stage = "compile", .keys = key_digests(keys), .devices = device_names(devices), .kernels = {}, .build_ms = 0, .reason = {}});
      if (notify != nullptr) {
        notify(program, user_data);
      }
      return CL_SUCCESS;
    }
  }
  const auto start = Clock::now();
  const auto status =
    next().clCompileProgram(program, num_devices, device_list, options, num_headers, headers, header_names, notify, user_data);
  const double build_ms = ms_since(start);
  if (settings().serves()) {
    audit({.hit = false, .stage = "compile", .keys = key_digests(keys), .devices = device_names(devices), .kernels = {},
           .build_ms = build_ms, .reason = reason});
  }
  if (status == CL_SUCCESS) {
    ProgramTable::instance().update(program, [&](TrackedProgram& t) {
      t.key_devices = devices;
      t.keys = keys;
      t.compiled = true;
    });
    if (settings().records() && built_everywhere(program, devices)) {
      if (auto now = ProgramTable::instance().find(program)) {
        write_compile_records(program, *now);
      }
    }
  }
  return status;
}

cl_program CL_API_CALL
link_program(cl_context context, cl_uint num_devices, const cl_device_id* device_list, const char* options, cl_uint num_inputs,
             const cl_program* inputs, Callback notify, void* user_data, cl_int* errcode_ret)
{
  // The link key: the inputs' compile keys, device by device.
  const auto devices = devices_or(num_devices, device_list, context_devices(context));
  std::vector<std::optional<TrackedProgram>> tracked_inputs;
  bool keyable = settings().mode != LayerMode::off && num_inputs > 0;
  for (cl_uint i = 0; keyable && i < num_inputs; ++i) {
    auto input = ProgramTable::instance().find(inputs[i]);
    keyable = input.has_value() && input->compiled && !input->keys.empty();
    tracked_inputs.push_back(std::move(input));
  }
  const std::string options_text = options == nullptr ? "" : options;
  std::vector<store::ProgramKey> keys;
  for (std::size_t d = 0; keyable && d < devices.size(); ++d) {
    std::string inputs_field;
    for (const auto& input : tracked_inputs) {
      const auto it = std::find(input->key_devices.begin(), input->key_devices.end(), devices[d]);
      if (it == input->key_devices.end()) {
        keyable = false;
        break;
      }
      inputs_field += (inputs_field.empty() ? "" : ",") + input->keys[static_cast<std::size_t>(it - input->key_devices.begin())].digest();
    }
    if (keyable) {
      keys.push_back(layer_key(devices[d], "link", store::SourceKind::source, sha256_hex(inputs_field), options_text,
                               {{"inputs", inputs_field}}));
    }
  }
  if (!keyable) {
    for (cl_uint i = 0; i < num_inputs; ++i) {
      materialise(inputs[i]);
    }
    return next().clLinkProgram(context, num_devices, device_list, options, num_inputs, inputs, notify, user_data, errcode_ret);
  }

  std::string reason = "not served in record mode";
  if (settings().serves()) {
    const auto start = Clock::now();
    auto stored = read_records(keys);
    reason = stored.reason;
    if (reason.empty()) {
      // A linked program has no source to keep: the program made from the
      // stored binaries is the application's handle.
      if (cl_program linked = program_from_binaries(context, devices, stored.binaries, options, reason)) {
        audit({.hit = true, .stage = "link", .keys = key_digests(keys), .devices = device_names(devices), .kernels = kernel_names(linked),
               .build_ms = ms_since(start), .reason = {}});
        if (errcode_ret != nullptr) {
          *errcode_ret = CL_SUCCESS;
        }
        if (notify != nullptr) {
          notify(linked, user_data);
        }
        return linked;
      }
    }
    operator_line(fmt::format("linking {} normally: {}", short_key(keys.front().digest()), reason));
  }
  const auto start = Clock::now();
  for (cl_uint i = 0; i < num_inputs; ++i) {
    if (const auto status = materialise(inputs[i]); status != CL_SUCCESS) {
      if (errcode_ret != nullptr) {
        *errcode_ret = CL_LINK_PROGRAM_FAILURE;
      }
      return nullptr;
    }
  }
  cl_int status = CL_SUCCESS;
  cl_program linked = next().clLinkProgram(context, num_devices, device_list, options, num_inputs, inputs, notify, user_data, &status);
  if (errcode_ret != nullptr) {
    *errcode_ret = status;
  }
  const double build_ms = ms_since(start);
  if (settings().serves()) {
    audit({.hit = false, .stage = "link", .keys = key_digests(keys), .devices = device_names(devices),
           .kernels = linked != nullptr && status == CL_SUCCESS ? kernel_names(linked) : std::vector<std::string>{},
           .build_ms = build_ms, .reason = reason});
  }
  if (settings().records() && linked != nullptr && status == CL_SUCCESS) {
    TrackedProgram record;
    record.context = context;
    record.key_devices = devices;
    record.keys = keys;
    record.build_options = options_text;
    record.record_at_release = settings().capture_at_release;
    if (record.record_at_release && std::all_of(devices.begin(), devices.end(), is_pocl)) {
      for (cl_uint i = 0; i < num_inputs; ++i) {
        next().clRetainProgram(inputs[i]);
        record.link_inputs.push_back(inputs[i]);
      }
    }
    ProgramTable::instance().put(linked, record);
    if (capture_after_build(devices) && built_everywhere(linked, devices)) {
      write_records(linked, record, k_after_link);
    }
  }
  return linked;
}

cl_int CL_API_CALL
release_program(cl_program program)
{
  // The application's last reference: forget the program, capture it, and
  // drop what the layer held for it. Kernels hold references too, so this
  // is also after its last kernel was released.
  if (program != nullptr && program_reference_count(program) == 1) {
    if (auto tracked = ProgramTable::instance().take(program)) {
      if (tracked->record_at_release && settings().records() && !g_exiting.load()) {
        write_records(program, *tracked, k_at_release);
      }
      if (tracked->shadow != nullptr) {
        next().clReleaseProgram(tracked->shadow);
      }
      for (const auto input : tracked->link_inputs) {
        release_held(input);
      }
      if (tracked->virtual_compile) {
        for (const auto& header : tracked->virtual_compile->headers) {
          next().clReleaseProgram(header.program);
        }
      }
    }
  }
  return next().clReleaseProgram(program);
}

cl_int CL_API_CALL
release_context(cl_context context)
{
  if (settings().records() && !g_exiting.load()) {
    for (const auto& [program, tracked] : ProgramTable::instance().recorded_in(context)) {
      write_records(program, tracked, k_at_context_release);
    }
  }
  return next().clReleaseContext(context);
}

cl_int CL_API_CALL
get_program_info(cl_program program, cl_program_info name, size_t size, void* value, size_t* size_ret)
{
  switch (name) {
    case CL_PROGRAM_REFERENCE_COUNT:
    case CL_PROGRAM_CONTEXT:
    case CL_PROGRAM_SOURCE:
    case CL_PROGRAM_IL:
      return next().clGetProgramInfo(program, name, size, value, size_ret); // the application's own
    default:
      break;
  }
  if (ProgramTable::instance().is_virtual(program)) {
    materialise(program);
  }
  return next().clGetProgramInfo(ProgramTable::instance().shadow_of(program), name, size, value, size_ret);
}

cl_int CL_API_CALL
get_program_build_info(cl_program program, cl_device_id device, cl_program_build_info name, size_t size, void* value,
                       size_t* size_ret)
{
  if (auto tracked = ProgramTable::instance().find(program); tracked && tracked->virtual_compile) {
    const auto answer = [&](const void* data, std::size_t data_size) { return answer_query(data, data_size, size, value, size_ret); };
    switch (name) {
      case CL_PROGRAM_BUILD_STATUS: {
        const cl_build_status status = CL_BUILD_SUCCESS;
        return answer(&status, sizeof status);
      }
      case CL_PROGRAM_BINARY_TYPE: {
        const cl_program_binary_type type = CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
        return answer(&type, sizeof type);
      }
      case CL_PROGRAM_BUILD_LOG:
        return answer(tracked->virtual_compile->log.c_str(), tracked->virtual_compile->log.size() + 1);
      case CL_PROGRAM_BUILD_OPTIONS:
        return answer(tracked->virtual_compile->options.c_str(), tracked->virtual_compile->options.size() + 1);
      default:
        materialise(program);
        break;
    }
  }
  return next().clGetProgramBuildInfo(ProgramTable::instance().shadow_of(program), device, name, size, value, size_ret);
}

cl_kernel CL_API_CALL
create_kernel(cl_program program, const char* name, cl_int* errcode_ret)
{
  const auto shadow = ProgramTable::instance().shadow_of(program);
  cl_kernel kernel = next().clCreateKernel(shadow, name, errcode_ret);
  if (kernel != nullptr && shadow != program) {
    next().clRetainProgram(program); // as the kernel would on an unshadowed program
    ProgramTable::instance().put_kernel(kernel, program);
  }
  return kernel;
}

cl_int CL_API_CALL
create_kernels_in_program(cl_program program, cl_uint num_kernels, cl_kernel* kernels, cl_uint* num_kernels_ret)
{
  const auto shadow = ProgramTable::instance().shadow_of(program);
  cl_uint created = 0;
  const auto status = next().clCreateKernelsInProgram(shadow, num_kernels, kernels, &created);
  if (num_kernels_ret != nullptr) {
    *num_kernels_ret = created;
  }
  if (status == CL_SUCCESS && kernels != nullptr && shadow != program) {
    for (cl_uint i = 0; i < created; ++i) {
      next().clRetainProgram(program);
      ProgramTable::instance().put_kernel(kernels[i], program);
    }
  }
  return status;
}

cl_kernel CL_API_CALL
clone_kernel(cl_kernel source, cl_int* errcode_ret)
{
  cl_kernel kernel = next().clCloneKernel(source, errcode_ret);
  if (kernel != nullptr) {
    if (const auto program = ProgramTable::instance().kernel_program(source)) {
      next().clRetainProgram(program);
      ProgramTable::instance().put_kernel(kernel, program);
    }
  }
  return kernel;
}

cl_int CL_API_CALL
release_kernel(cl_kernel kernel)
{
  cl_uint count = 0;
  cl_program program = nullptr;
  if (next().clGetKernelInfo(kernel, CL_KERNEL_REFERENCE_COUNT, sizeof count, &count, nullptr) == CL_SUCCESS && count == 1) {
    program = ProgramTable::instance().take_kernel(kernel);
  }
  const auto status = next().clReleaseKernel(kernel);
  if (program != nullptr) {
    release_program(program); // the reference the kernel held
  }
  return status;
}

cl_int CL_API_CALL
get_kernel_info(cl_kernel kernel, cl_kernel_info name, size_t size, void* value, size_t* size_ret)
{
  if (name == CL_KERNEL_PROGRAM) {
    if (const auto program = ProgramTable::instance().kernel_program(kernel)) {
      return answer_query(&program, sizeof program, size, value, size_ret);
    }
  }
  return next().clGetKernelInfo(kernel, name, size, value, size_ret);
}

void* CL_API_CALL
get_extension_function_address(const char* name)
{
  return wrap_extension(name, next().clGetExtensionFunctionAddress(name));
}

void* CL_API_CALL
get_extension_function_address_for_platform(cl_platform_id platform, const char* name)
{
  return wrap_extension(name, next().clGetExtensionFunctionAddressForPlatform(platform, name));
}

} // namespace prewarm::layer
