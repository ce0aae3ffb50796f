// SPDX-License-Identifier: Apache-2.0
// The OpenCL headers as the layer sees them: the whole 3.0 API (the layer
// forwards IL and specialisation-constant calls that runtime/opencl/cl.hpp's
// 1.2 level leaves out) and the ICD dispatch table.
#pragma once

#ifdef CL_TARGET_OPENCL_VERSION
#if CL_TARGET_OPENCL_VERSION != 300
#error "the OpenCL layer needs CL_TARGET_OPENCL_VERSION 300 (set by its CMake target)"
#endif
#else
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
