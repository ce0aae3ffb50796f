// SPDX-License-Identifier: Apache-2.0
// RAII for OpenCL handles (base/owned.hpp): each releases its handle exactly
// once; share() retains, for the rare place that needs a second owner (the
// program store keeps programs until capture).
#pragma once

#include "base/owned.hpp"
#include "opencl/cl.hpp"

namespace prewarm::opencl {

using UniqueContext = Owned<cl_context, clReleaseContext, clRetainContext>;
using UniqueQueue = Owned<cl_command_queue, clReleaseCommandQueue, clRetainCommandQueue>;
using UniqueProgram = Owned<cl_program, clReleaseProgram, clRetainProgram>;
using UniqueKernel = Owned<cl_kernel, clReleaseKernel, clRetainKernel>;
using UniqueMem = Owned<cl_mem, clReleaseMemObject, clRetainMemObject>;
using UniqueEvent = Owned<cl_event, clReleaseEvent, clRetainEvent>;

} // namespace prewarm::opencl
