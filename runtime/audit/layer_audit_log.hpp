// SPDX-License-Identifier: Apache-2.0
// Per-program events of the OpenCL layer, appended while the application
// runs to the file named by PREWARM_LAYER_AUDIT_LOG. When that file exists
// as an audit is assembled, its events are reported under kind "programs".
//
// Format: JSON lines, one object per program the layer saw built:
//   {"event":"hit"|"miss", "key":"<program-store key>",
//    "kernels":["name", ...], "build_ms": <number>, "stage":"build",
//    "reason":"...", "passed_through":true}
//   event     hit: served from the store; miss: built from source
//   key       the store key (program_store.hpp), or "" when none was made
//   kernels   kernel names of the program (may be empty)
//   build_ms  time spent in clBuildProgram/serving, milliseconds (optional)
//   stage     build, compile or link (optional)
//   reason    why a miss was not served (optional)
//   passed_through  a miss the layer could not key (an include it cannot
//             resolve: runtime/store/program_includes.hpp): never served,
//             never recorded, whatever the store holds (optional, false)
// Unknown members are ignored (later versions may add some); a line that is
// not such an object is counted as malformed and skipped, never fatal.
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::audit {

inline constexpr std::string_view k_layer_audit_log_variable = "PREWARM_LAYER_AUDIT_LOG";

struct LayerEvent
{
  bool hit = false;
  std::string key;
  std::vector<std::string> kernels;
  double build_ms = 0;
  std::string stage;
  std::string reason;
  bool passed_through = false;
};

struct LayerAuditLog
{
  std::vector<LayerEvent> events;
  std::size_t malformed_lines = 0;
};

LayerAuditLog parse_layer_audit_log(std::string_view text);

// The file's events; nullopt-like empty log with no events when it is absent.
Result<LayerAuditLog> read_layer_audit_log(const std::filesystem::path& path);

} // namespace prewarm::audit
