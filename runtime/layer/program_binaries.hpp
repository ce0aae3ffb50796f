// SPDX-License-Identifier: Apache-2.0
// Program binaries in and out of the driver, through the next dispatch:
// reading a program's binaries (what record mode captures), making a built
// program from binaries (what serve mode hands out), and the capture's way
// around PoCL's frozen binaries.
#pragma once

#include "layer/cl_layer_api.hpp"
#include "store/program_record.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prewarm::layer {

using DeviceBinaries = std::vector<std::pair<cl_device_id, std::string>>;

// CL_PROGRAM_BINARIES, one per device of CL_PROGRAM_DEVICES; empty on error.
DeviceBinaries program_binaries(cl_program program);

// clCreateProgramWithBinary + clBuildProgram for `devices`; null and a
// reason when the driver refuses.
cl_program program_from_binaries(cl_context context, const std::vector<cl_device_id>& devices,
                                 const std::vector<std::string>& binaries, const char* options, std::string& reason);

bool is_pocl(cl_device_id device);

// PoCL 3.1 serialises a program's binary at the first CL_PROGRAM_BINARY_SIZES
// or CL_PROGRAM_BINARIES query and returns those bytes ever after (a program
// made from a binary returns that binary). An application that reads its own
// binaries right after the build (CLBlast does, for its in-process binary
// cache: clblast::Program::GetIR from Routine::InitProgram) so freezes out
// the work-group functions PoCL generates later, at the kernels' first
// enqueue, one per local size; a process served that binary compiles them
// again (CLBlast's GEMM: ~1.6 s of ~1.9 s here). They are still in PoCL's
// kernel cache directory of the program, named by the build hash of source,
// options and device, which a second program built from the same source
// shares: PoCL finds its program.bc there (no front end), and the second
// program's binary, serialised now, holds every function generated so far.
// A program linked by clLinkProgram has no source: its second program is a
// second link of the same compiled inputs (PoCL names the directory by the
// linked code, the same for both; the layer keeps the inputs alive for this
// in record mode). `binaries` as read from the application's program;
// returns the second program's, or `binaries` unchanged when a device is not PoCL, PoCL's
// kernel cache is off (POCL_KERNEL_CACHE=0: the second build would compile
// everything again for nothing), or PoCL refuses.
struct ProgramSource
{
  cl_context context = nullptr;
  store::SourceKind kind = store::SourceKind::source;
  std::string_view payload; // source text or IL bytes
  std::string_view options;
  std::vector<cl_program> link_inputs; // a linked program: its compiled inputs
};
DeviceBinaries with_lazily_generated_code(const ProgramSource& source, DeviceBinaries binaries);

} // namespace prewarm::layer
