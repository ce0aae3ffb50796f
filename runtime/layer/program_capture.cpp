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
#include <mutex>

#include <unistd.h>

namespace prewarm::layer {
namespace {

std::atomic<bool> g_exiting{false};
std::atomic<bool> g_armed{false};
std::atomic<bool> g_main_watched{false};

bool
on_main_thread()
{
  return gettid() == getpid();
}

void
capture_at_exit()
{
  if (g_armed.load() && !g_exiting.load() && settings().records()) {
    for (const auto& [program, tracked] : ProgramTable::instance().recorded_in(nullptr)) {
      write_records(program, tracked, k_at_exit);
    }
  }
  g_exiting.store(true);
}

// glibc's exit() destroys the calling thread's thread_local objects before
// it runs a single atexit handler (stdlib/exit.c, __run_exit_handlers): this
// object's destructor in the main thread is the first thing exit() does, when
// every library is still whole. An atexit handler is not: a function-local
// static that LLVM constructs after the handler was registered (at the
// kernels' first enqueue, in PoCL's worker thread: the EVT tables of
// llvm::SDNode::getValueTypeList) is destroyed before it, and reading a cold
// program's binary at exit runs LLVM's code generator over the freed tables
// (SIGSEGV in about half the runs on PoCL 3.1; the binary query compiles the
// work-group functions PoCL has not yet cached).
struct ExitWatch
{
  ExitWatch() { g_main_watched.store(true); }
  ExitWatch(const ExitWatch&) = delete;
  ExitWatch& operator=(const ExitWatch&) = delete;
  ~ExitWatch()
  {
    // The main thread's thread_local objects end with exit(), or with the
    // main thread's pthread_exit (the process lives on: nothing is captured
    // then, the releases still are).
    if (on_main_thread()) {
      capture_at_exit();
    }
  }
};

void
watch_main_thread()
{
  if (on_main_thread()) {
    thread_local ExitWatch watch;
    (void)watch;
  }
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
start_exit_watch()
{
  if (settings().records() && settings().capture_at_exit) {
    watch_main_thread();
  }
}

void
arm_exit_capture()
{
  if (!settings().capture_at_exit) {
    return;
  }
  g_armed.store(true);
  watch_main_thread();
  if (!g_main_watched.load()) {
    static std::once_flag once;
    std::call_once(once, [] {
      operator_line("the main thread has made no OpenCL call: programs still alive at exit are not captured (their release is)");
    });
  }
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
