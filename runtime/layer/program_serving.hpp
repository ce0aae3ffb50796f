// SPDX-License-Identifier: Apache-2.0
// Serve mode's sources of binaries: the store's records (one per device, all
// or nothing), Intel zebins compiled ahead of time (aot_binaries.hpp), and
// the real compile behind a deferred one (materialise).
#pragma once

#include "layer/cl_layer_api.hpp"
#include "store/program_record.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace prewarm::layer {

// Every device's record; the first failure is the reason.
struct StoredBinaries
{
  std::vector<std::string> binaries;
  std::string reason; // empty when every device has a record
};
StoredBinaries read_records(const std::vector<store::ProgramKey>& keys);

// Zebins compiled ahead of time for every device; the first device without
// one is the reason.
struct AotServing
{
  std::vector<std::string> binaries;
  std::string origin; // "AOT acm-g10 3f2a9c01b2d4"
  std::string reason;
  bool installed = true; // false: no AOT targets in the store
};
AotServing aot_binaries(const std::vector<cl_device_id>& devices, std::string_view source, std::string_view options);

// Compiles a virtually compiled program for real (a link missed, or a query
// needs the driver's object). The application was told it compiled, so a
// failure here is reported by whatever call needed it.
cl_int materialise(cl_program program);

} // namespace prewarm::layer
