// SPDX-License-Identifier: Apache-2.0
// Ahead-of-time binaries in the layer's serve mode: on an Intel GPU whose
// program store has no record of its own for a program (the build host had
// no such GPU), the zebin that prewarm build compiled with ocloc from the
// recorded source (runtime/level_zero/aot_programs.hpp, under the store's
// aot/ directory) is handed to clCreateProgramWithBinary instead. Selection
// is the runtime's: vendor intel, the device's PCI id listed by a target,
// and its driver (CL_DRIVER_VERSION, NEO's release) equal to the ocloc that
// made the zebin. Anything else is a reason, and the program is built as
// the application asked.
#pragma once

#include "layer/cl_layer_api.hpp"

#include <string>
#include <string_view>

namespace prewarm::layer {

struct AotBinary
{
  std::string zebin;  // empty: not served, see reason
  std::string target; // the ocloc device ("acm-g10") when one was selected
  std::string key;    // the AOT entry's key when one was found
  std::string reason;
  bool installed = true; // false: the store holds no AOT targets at all (nothing to say)
};

// The zebin for a program of OpenCL C `source` built with `options` on
// `device`, or why there is none. The store's aot/ directory is read once.
AotBinary find_aot_binary(cl_device_id device, std::string_view source, std::string_view options);

} // namespace prewarm::layer
