// SPDX-License-Identifier: Apache-2.0
// What the layer asks the driver about programs, contexts and devices
// (through the next dispatch, never the application's view), and the small
// vocabulary the program calls share: timing and short key names.
#pragma once

#include "layer/cl_layer_api.hpp"
#include "store/program_record.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace prewarm::layer {

using Clock = std::chrono::steady_clock;
using Callback = void(CL_CALLBACK*)(cl_program, void*);

double ms_since(Clock::time_point start);
std::string short_key(const std::string& key); // the first 12 hex digits, for operator lines

std::vector<cl_device_id> program_devices(cl_program program);
std::vector<cl_device_id> context_devices(cl_context context);
std::vector<std::string> kernel_names(cl_program program);
std::string build_log(cl_program program, cl_device_id device);
bool built_everywhere(cl_program program, const std::vector<cl_device_id>& devices);
std::vector<std::string> device_names(const std::vector<cl_device_id>& devices);
std::vector<std::string> key_digests(const std::vector<store::ProgramKey>& keys);

// The devices a call names, or `fallback` when it names none.
std::vector<cl_device_id> devices_or(cl_uint count, const cl_device_id* list, std::vector<cl_device_id> fallback);

} // namespace prewarm::layer
