// SPDX-License-Identifier: Apache-2.0
// The device half of a program key, queried through the layer's next
// dispatch and kept per cl_device_id: platform and device names and
// versions, driver version, vendor (as runtime/opencl/device.cpp names it),
// and the identity of the ICD library that implements the device (path,
// size and modification time: a driver package upgrade changes them; a
// content hash of a 100 MB vendor library would cost every start tens of
// milliseconds).
#pragma once

#include "layer/cl_layer_api.hpp"
#include "store/program_record.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace prewarm::layer {

struct DeviceIdentity : store::DeviceFields
{
  std::string icd; // "<path> size=<bytes> mtime=<seconds>"
};

const DeviceIdentity& identity_of(cl_device_id device);

// The store key for a program of `payload` built with `options` for
// `device`; `extra` is appended after the layer's own fields.
store::ProgramKey layer_key(cl_device_id device,
                            std::string_view stage,
                            store::SourceKind kind,
                            std::string_view payload_sha256,
                            std::string_view options,
                            std::vector<std::pair<std::string, std::string>> extra = {});

} // namespace prewarm::layer
