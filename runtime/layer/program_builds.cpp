// SPDX-License-Identifier: Apache-2.0
// clBuildProgram, clCompileProgram and clLinkProgram as the layer serves and
// records them. Whatever fails on the layer's side (no record, a corrupt
// record, a binary the driver refuses) ends in the application's own call
// made as it asked: the application sees the driver's result, the operator
// sees why (layer_log.hpp). A source whose inputs cannot all be known (an
// include the layer cannot resolve, program_keys.hpp) is passed through:
// built as asked, never served, never recorded, and said so.
#include "layer/layer_calls.hpp"

#include "base/digest.hpp"
#include "layer/device_identity.hpp"
#include "layer/layer_log.hpp"
#include "layer/layer_settings.hpp"
#include "layer/next_dispatch.hpp"
#include "layer/program_binaries.hpp"
#include "layer/program_capture.hpp"
#include "layer/program_keys.hpp"
#include "layer/program_queries.hpp"
#include "layer/program_serving.hpp"
#include "layer/program_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::layer {
namespace {

// The layer forgets whatever it would have recorded for `program`, tells
// the operator and, when serving, the audit log.
void
note_pass_through(cl_program program, std::string_view stage, const std::vector<cl_device_id>& devices, const std::string& why,
                  cl_int status, double build_ms)
{
  ProgramTable::instance().update(program, [](TrackedProgram& t) {
    t.keys.clear();
    t.key_devices.clear();
    t.record_at_release = false;
  });
  operator_line(fmt::format("passing a {} through (never served, never recorded): {}", stage, why));
  if (settings().serves()) {
    audit({.hit = false, .stage = std::string(stage), .keys = {}, .devices = device_names(devices),
           .kernels = status == CL_SUCCESS && stage == "build" ? kernel_names(program) : std::vector<std::string>{},
           .build_ms = build_ms, .reason = fmt::format("passed through: {}", why), .passed_through = true});
  }
}

// The include part of the keys, kept with what it was resolved from.
void
remember_includes(cl_program program, const store::IncludeDigest& includes, const std::string& options,
                  std::vector<std::pair<std::string, std::string>> embedded = {})
{
  ProgramTable::instance().update(program, [&](TrackedProgram& t) {
    t.includes_digest = includes.any ? includes.digest() : std::string{};
    t.include_options = options;
    t.embedded_headers = std::move(embedded);
  });
}

} // namespace

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
  const auto includes = source_includes(*tracked, options_text);
  if (!includes.complete) {
    const auto start = Clock::now();
    const auto status = next().clBuildProgram(program, num_devices, device_list, options, notify, user_data);
    note_pass_through(program, "build", devices, includes.unsure, status, ms_since(start));
    return status;
  }
  remember_includes(program, includes, options_text);
  const auto keys = build_keys(*tracked, devices, "build", options_text, store::include_key_fields(includes));

  std::string reason = "not served in record mode";
  if (settings().serves()) {
    const auto start = Clock::now();
    auto stored = read_records(keys);
    std::string origin = "the store";
    // No record made on this device: an Intel GPU the build host did not
    // have may still have a zebin compiled ahead of time, from the recorded
    // source alone (so never for a source that includes files).
    if (!stored.reason.empty() && tracked->kind == store::SourceKind::source && !includes.any) {
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
    if (settings().capture_at_release) {
      arm_exit_capture();
    }
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
  std::vector<std::pair<std::string, std::string>> embedded; // name, source
  bool keyable = tracked.has_value() && tracked->kind == store::SourceKind::source;
  for (cl_uint i = 0; keyable && i < num_headers; ++i) {
    const auto header = ProgramTable::instance().find(headers[i]);
    if (!header || header_names == nullptr || header_names[i] == nullptr) {
      keyable = false;
      break;
    }
    header_fields.emplace_back("header", fmt::format("{} {}", header_names[i], header->payload_sha256));
    embedded.emplace_back(header_names[i], header->payload);
  }
  if (!keyable) {
    return next().clCompileProgram(program, num_devices, device_list, options, num_headers, headers, header_names, notify, user_data);
  }
  const std::string options_text = options == nullptr ? "" : options;
  const auto devices = devices_or(num_devices, device_list, program_devices(program));
  std::vector<store::EmbeddedHeader> embedded_view;
  for (const auto& [name, source] : embedded) {
    embedded_view.push_back({name, source});
  }
  const auto includes = source_includes(*tracked, options_text, embedded_view);
  if (!includes.complete) {
    const auto start = Clock::now();
    const auto status =
      next().clCompileProgram(program, num_devices, device_list, options, num_headers, headers, header_names, notify, user_data);
    note_pass_through(program, "compile", devices, includes.unsure, status, ms_since(start));
    return status;
  }
  const auto include_fields = store::include_key_fields(includes);
  header_fields.insert(header_fields.end(), include_fields.begin(), include_fields.end());
  remember_includes(program, includes, options_text, std::move(embedded));
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

namespace {

// The link's key on each device: the inputs' compile keys there. Nothing
// when an input is not a program the layer compiled and keyed on every device.
std::optional<std::vector<store::ProgramKey>>
link_keys(const std::vector<cl_device_id>& devices, cl_uint num_inputs, const cl_program* inputs,
          const std::string& options_text)
{
  std::vector<std::optional<TrackedProgram>> tracked_inputs;
  bool keyable = settings().mode != LayerMode::off && num_inputs > 0;
  for (cl_uint i = 0; keyable && i < num_inputs; ++i) {
    auto input = ProgramTable::instance().find(inputs[i]);
    keyable = input.has_value() && input->compiled && !input->keys.empty();
    tracked_inputs.push_back(std::move(input));
  }
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
    return std::nullopt;
  }
  return keys;
}

} // namespace

cl_program CL_API_CALL
link_program(cl_context context, cl_uint num_devices, const cl_device_id* device_list, const char* options,
             cl_uint num_inputs, const cl_program* inputs, Callback notify, void* user_data, cl_int* errcode_ret)
{
  // The link key: the inputs' compile keys, device by device.
  const auto devices = devices_or(num_devices, device_list, context_devices(context));
  const std::string options_text = options == nullptr ? "" : options;
  const auto link_keyed = link_keys(devices, num_inputs, inputs, options_text);
  const bool keyable = link_keyed.has_value();
  const std::vector<store::ProgramKey> keys = link_keyed.value_or(std::vector<store::ProgramKey>{});
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
    if (record.record_at_release) {
      arm_exit_capture();
    }
    if (capture_after_build(devices) && built_everywhere(linked, devices)) {
      write_records(linked, record, k_after_link);
    }
  }
  return linked;
}

} // namespace prewarm::layer
