// SPDX-License-Identifier: Apache-2.0
// What the layer tells the operator. The application never sees any of it:
// a layer that fails falls back to the driver's own build, silently.
//
// Operator lines: "prewarm-layer: <message>" on stderr, only when
// PREWARM_LAYER_LOG is set (the application's stderr is not ours to fill).
//
// Audit log (PREWARM_LAYER_AUDIT_LOG): one JSON object per line, appended
// with one write(2) each, so threads and processes sharing the file never
// interleave inside a line:
//   {"event":"hit"|"miss","key":"<store key of the first device>",
//    "keys":[...one per device...],"kernels":["name",...],"build_ms":12.5,
//    "stage":"build"|"compile"|"link","devices":["<CL_DEVICE_NAME>",...],
//    "reason":"<why not served; misses only>",
//    "passed_through":true (misses the layer did not key at all: an
//                           include it cannot resolve; reason "passed through: ..."),
//    "from":"the store"|"AOT <ocloc device> <key12>" (hits of a build)}
// The file must be a regular file: it is opened O_NONBLOCK and O_NOFOLLOW
// (a FIFO or a link planted there is refused, never waited on), and
// anything else is an operator line, the event lost.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace prewarm::layer {

bool operator_log_enabled();
void operator_line(std::string_view message);

struct AuditEvent
{
  bool hit = false;
  std::string stage; // build, compile, link
  std::vector<std::string> keys;
  std::vector<std::string> devices;
  std::vector<std::string> kernels;
  double build_ms = 0;
  std::string reason;
  std::string origin = {}; // hits: "the store" or "AOT <ocloc device> <key>"
  bool passed_through = false;
};

// Appends to PREWARM_LAYER_AUDIT_LOG when set; in audit mode without it, to
// stderr. Errors writing it are operator lines, never the application's.
void audit(const AuditEvent& event);

} // namespace prewarm::layer
