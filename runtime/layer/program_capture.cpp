// SPDX-License-Identifier: Apache-2.0
#include "layer/program_capture.hpp"

#include "layer/device_identity.hpp"
#include "layer/layer_log.hpp"
#include "layer/layer_settings.hpp"
#include "layer/program_binaries.hpp"
#include "layer/program_keys.hpp"
#include "layer/program_queries.hpp"
#include "store/program_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

namespace prewarm::layer {
namespace {

std::atomic<bool> g_exiting{false};

void
capture_at_exit()
{
  if (!g_exiting.load() && settings().records()) {
    for (const auto& [program, tracked] : ProgramTable::instance().recorded_in(nullptr)) {
      write_records(program, tracked, k_at_exit);
    }
  }
  g_exiting.store(true);
}

} // namespace

bool
exiting()
{
  return g_exiting.load();
}

void
mark_exiting()
{
  g_exiting.store(true);
}

void
arm_exit_capture()
{
  if (!settings().capture_at_exit) {
    return;
  }
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(capture_at_exit); });
}

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

void
write_records(cl_program program, const TrackedProgram& tracked, CapturePoint capture)
{
  const auto when = capture.name;
  if (tracked.keys.empty()) {
    return;
  }
  if (!includes_unchanged(tracked)) {
    operator_line(fmt::format("record ({}): a file the program includes changed since its build; nothing stored", when));
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
    // The OpenCL C beside the record is what the builder compiles ahead of
    // time: only a source that is whole without files of its host.
    const bool whole_source = tracked.kind == store::SourceKind::source && !tracked.compiled && tracked.includes_digest.empty();
    const std::string_view source = whole_source ? std::string_view(tracked.payload) : std::string_view{};
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

void
write_compile_records(cl_program program, const TrackedProgram& tracked)
{
  if (!includes_unchanged(tracked)) {
    operator_line("record (compile): a file the program includes changed during its compile; nothing stored");
    return;
  }
  for (std::size_t i = 0; i < tracked.key_devices.size(); ++i) {
    const auto log = build_log(program, tracked.key_devices[i]);
    if (auto written = store::write_record(settings().store, tracked.keys[i], log); !written) {
      operator_line(fmt::format("record (compile): {}", written.error().message()));
    }
  }
}

} // namespace prewarm::layer
