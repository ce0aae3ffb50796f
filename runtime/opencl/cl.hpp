// SPDX-License-Identifier: Apache-2.0
// The one place that includes the OpenCL headers, so every file agrees on the
// API level. 1.2 is the level every ICD we target implements (NVIDIA's
// OpenCL 3.0 is 1.2 plus optional features; PoCL 3.1 is 3.0); nothing here
// needs 2.x host APIs, and 1.2 keeps clCreateCommandQueue undeprecated.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>
