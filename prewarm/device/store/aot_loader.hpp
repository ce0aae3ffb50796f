// SPDX-License-Identifier: Apache-2.0
// Serving ahead-of-time binaries on the OpenCL path (the Level Zero path is
// level_zero/aot_serving.hpp; both read the format of
// level_zero/aot_programs.hpp). On an Intel host whose programs cache
// directory holds aot/<ocloc-device>/ targets: pick the target for the device
// (pci-id, driver), find the entry for source + options, and build it with
// clCreateProgramWithBinary(zebin) + clBuildProgram. ANY failure (no target
// for this device, driver differs, no entry, binary rejected, build fails)
// is a reason, never an error: the caller builds the program the normal way
// (program store / source) and logs why.
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"
#include "level_zero/aot_programs.hpp"
#include "opencl/cl.hpp"
#include "opencl/device.hpp"
#include "opencl/owned.hpp"

#include <string>
#include <string_view>

namespace prewarm::store {

struct AotLoad
{
  opencl::UniqueProgram program; // built from the AOT binary; null when not served
  std::string target;            // the ocloc device selected ("acm-g11"); empty if none
  std::string key;               // the AOT entry tried; empty if none was found
  std::string reason;            // why not served; empty when served

  bool served() const { return static_cast<bool>(program); }
  // "aot acm-g11 3f2a9c01b2d4" or "fallback: <reason>", for run reports.
  std::string summary() const;
};

// The device as AOT selection reads it. Intel's OpenCL driver (NEO) reports
// its release as CL_DRIVER_VERSION, the same NEO_OCL_DRIVER_VERSION string
// that ocloc's OCL_DRIVER_VERSION query prints, so intel.driver is taken
// from opencl.driver when the device does not report it otherwise.
DeviceProperties aot_device_properties(const opencl::DeviceRef& device);

// clCreateProgramWithBinary(zebin) + clBuildProgram(options) for one device.
// A binary the driver does not take is Errc::failed naming the binary status
// ("CL_INVALID_BINARY"); a failed build carries the build log.
Result<opencl::UniqueProgram> build_from_aot_binary(cl_context context,
                                                    cl_device_id device,
                                                    std::string_view zebin,
                                                    std::string_view options);

// Selection (programs.select on aot_device_properties), lookup and
// build_from_aot_binary. Never an error: a program or the reason why not.
AotLoad load_aot_program(cl_context context,
                         const opencl::DeviceRef& device,
                         const level_zero::AotPrograms& programs,
                         std::string_view source,
                         std::string_view options);

} // namespace prewarm::store
