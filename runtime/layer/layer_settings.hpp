// SPDX-License-Identifier: Apache-2.0
// What the OpenCL layer does in this process, read once from the
// environment (the layer has no command line):
//   PREWARM_LAYER=record|serve|audit   anything else (or unset): pass every call through
//   PREWARM_PROGRAM_STORE=DIR          the program store (store/program_record.hpp)
//   PREWARM_LAYER_AUDIT_LOG=FILE       JSON lines, one per program build (hit or miss);
//                                      written in serve and audit mode when set
//   PREWARM_LAYER_LOG=1                operator lines on stderr ("prewarm-layer: ...")
//   PREWARM_LAYER_CAPTURE=build,release,exit  when record mode reads program binaries
//                                      (default: all three, except after build on PoCL;
//                                      release includes context release; exit: the
//                                      programs still alive; see program_capture.hpp)
// record: every program the application builds from source or IL is built
//   as usual, and its binaries are written to the store (after the build, at
//   its last clReleaseProgram, and at exit for programs still alive).
// serve: a program whose binaries are all stored is built from them instead
//   (a shadow program); anything else builds as usual.
// audit: serve, and every build is written to the audit log (stderr when
//   PREWARM_LAYER_AUDIT_LOG is unset).
#pragma once

#include <filesystem>
#include <string>

namespace prewarm::layer {

enum class LayerMode { off, record, serve, audit };

struct LayerSettings
{
  LayerMode mode = LayerMode::off;
  std::filesystem::path store;
  std::string audit_log;   // empty: no audit file
  bool capture_after_build = true;
  bool capture_at_release = true;
  // At exit, for programs still alive (OpenCV's): from the main thread's
  // first step in exit(), before any atexit handler (program_capture.hpp).
  // An atexit handler crashed PoCL 3.1 applications in about half the runs
  // with a cold PoCL cache (LLVM's lazily made statics already destroyed).
  bool capture_at_exit = true;
  bool capture_explicit = false; // PREWARM_LAYER_CAPTURE was set: no per-driver default

  bool serves() const { return mode == LayerMode::serve || mode == LayerMode::audit; }
  bool records() const { return mode == LayerMode::record; }
};

// Read on the first call; a mode without a store is off (and says so when
// PREWARM_LAYER_LOG is set).
const LayerSettings& settings();

} // namespace prewarm::layer
