// SPDX-License-Identifier: Apache-2.0
// Record mode: when and how an application's program binaries are written to
// the store.
//
// Capture points: right after a successful build, compile or link (the final
// binary for drivers that compile everything up front, such as NVIDIA's and
// Intel's), and again at the application's last clReleaseProgram, when PoCL
// 3.1's binary also holds the work-group functions it generated lazily at
// the kernels' first enqueues (interception.md §3). PoCL 3.1 serialises a
// program's binary at the first CL_PROGRAM_BINARIES query and returns those
// same bytes ever after, so a capture after the build would freeze out the
// lazily generated code (measured here with layer_test_app: 63 KB after
// build and again at release, 94 KB at release alone; served 0.94 s vs
// 0.27 s). On PoCL the layer captures at release only, unless
// PREWARM_LAYER_CAPTURE says otherwise. An application may still have frozen
// the binary itself by reading it after the build (CLBlast, hashcat): a
// release capture on PoCL therefore reads a second program's binary
// (program_binaries.hpp).
//
// Programs an application keeps until exit (OpenCV's program cache, CLBlast's)
// are captured twice over: at the application's clReleaseContext, its last
// word before exit in most programs, for the context's programs still alive,
// and at exit, by the destructor of a thread_local object of the main thread,
// which glibc's exit() runs before any atexit handler and any static
// destructor, so that PoCL and its LLVM are whole (an atexit handler was not
// safe: program_capture.cpp). Nothing is captured at exit when the main
// thread made no OpenCL call, when another thread calls exit(), or at
// _exit/quick_exit. A release that comes later (from a static destructor,
// when PoCL's LLVM may be torn down: a measured crash) is never captured.
//
// Nothing is stored for a program whose included files changed between its
// build and the capture (program_keys.hpp), and no OpenCL C is kept beside a
// record whose source includes files (the builder's ahead-of-time compile
// would not have them).
#pragma once

#include "layer/cl_layer_api.hpp"
#include "layer/program_table.hpp"

#include <string_view>
#include <vector>

namespace prewarm::layer {

// When a capture reads a program's binaries: right after its build, or once
// its kernels may have run.
struct CapturePoint
{
  std::string_view name;
  bool after_enqueues;
};
inline constexpr CapturePoint k_after_build{"after build", false};
inline constexpr CapturePoint k_after_link{"after link", false};
inline constexpr CapturePoint k_at_release{"at release", true};
inline constexpr CapturePoint k_at_context_release{"at context release", true};
inline constexpr CapturePoint k_at_exit{"at exit", true};

// Whether a build on `devices` is captured right away (not on PoCL unless
// PREWARM_LAYER_CAPTURE names build).
bool capture_after_build(const std::vector<cl_device_id>& devices);

// Writes the program's binaries under its keys (a build or a link).
void write_records(cl_program program, const TrackedProgram& tracked, CapturePoint capture);

// A compile record holds the build log: a later run only needs to know that
// this compile succeeded, and what the application was told.
void write_compile_records(cl_program program, const TrackedProgram& tracked);

// The exit capture covers the programs recorded from now on (call after a
// recorded build); start_exit_watch() at the layer's start, so that a main
// thread that only initialised OpenCL is watched too.
void arm_exit_capture();
void start_exit_watch();

// Exit has begun (the capture at exit ran, or the process is past the
// point where the driver can be trusted): no capture any more.
bool exiting();
void mark_exiting();

} // namespace prewarm::layer
