// SPDX-License-Identifier: Apache-2.0
// prewarm-cl-replay: builds OpenCL C programs on the first OpenCL GPU and
// executes nothing. It is what runs against Intel's driver on a virtual
// device (virtual_device.hpp): there a kernel never completes, but every
// clBuildProgram goes through the driver's own compiler cache (NEO_CACHE_DIR)
// exactly as the application's build would.
//
// It runs under another distribution's dynamic loader and libraries (the
// Intel root's glibc and libstdc++ are newer than the build host's, which an
// older binary accepts), so it links nothing but libOpenCL and the C++
// runtime: none of prewarm's libraries, whose dependencies the root lacks.
//
// Usage: prewarm-cl-replay LIST
//   LIST: one program per line, "<source file>\t<build options>" (options may
//         be empty; the tab is required).
// stdout, one line each, tab-separated:
//   device  <CL_DEVICE_NAME>  <CL_DRIVER_VERSION>  <device id, 0x%04x or "">
//           <CL_DEVICE_IP_VERSION_INTEL, decimal or "">  <CL_DEVICE_EXTENSIONS>
//   built   <seconds>  <source file>  <options>
//   failed  <status>   <source file>  <options>     (the build log on stderr)
// Exit: 0 every program built (an empty LIST: the device line alone); 1 one
// failed; 2 usage, input or no GPU.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr cl_device_info k_device_id_intel = 0x4251;         // cl_intel_device_attribute_query
constexpr cl_device_info k_device_ip_version_intel = 0x4250; // the same extension

std::string
device_string(cl_device_id device, cl_device_info what)
{
  std::size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) {
    return {};
  }
  std::string text(size, '\0');
  if (clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS) {
    return {};
  }
  while (!text.empty() && text.back() == '\0') {
    text.pop_back();
  }
  return text;
}

cl_device_id
first_gpu()
{
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    return nullptr;
  }
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  for (const auto platform : platforms) {
    cl_device_id device = nullptr;
    cl_uint devices = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, &devices) == CL_SUCCESS && devices > 0) {
      return device;
    }
  }
  return nullptr;
}

struct Program
{
  std::string file;
  std::string options;
};

bool
read_list(const char* path, std::vector<Program>& out)
{
  std::ifstream in(path);
  if (!in) {
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      continue;
    }
    const auto tab = line.find('\t');
    if (tab == std::string::npos) {
      return false;
    }
    out.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return true;
}

} // namespace

int
main(int argc, char** argv)
{
  std::vector<Program> programs;
  if (argc != 2 || !read_list(argv[1], programs)) {
    std::cerr << "prewarm-cl-replay: error: E_USAGE: usage: prewarm-cl-replay LIST (lines \"<source>\\t<options>\")\n";
    return 2;
  }
  const cl_device_id device = first_gpu();
  if (device == nullptr) {
    std::cerr << "prewarm-cl-replay: error: E_NO_DEVICE: no OpenCL GPU device (is the ICD found? OCL_ICD_VENDORS)\n";
    return 2;
  }
  cl_uint id = 0;
  const bool has_id = clGetDeviceInfo(device, k_device_id_intel, sizeof id, &id, nullptr) == CL_SUCCESS;
  char id_text[16] = "";
  if (has_id) {
    std::snprintf(id_text, sizeof id_text, "0x%04x", id);
  }
  cl_uint ip_version = 0;
  const bool has_ip = clGetDeviceInfo(device, k_device_ip_version_intel, sizeof ip_version, &ip_version, nullptr) ==
                        CL_SUCCESS &&
                      ip_version != 0;
  std::cout << "device\t" << device_string(device, CL_DEVICE_NAME) << '\t' << device_string(device, CL_DRIVER_VERSION)
            << '\t' << id_text << '\t' << (has_ip ? std::to_string(ip_version) : std::string())
            << '\t' << device_string(device, CL_DEVICE_EXTENSIONS) << std::endl;

  cl_int status = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) {
    std::cerr << "prewarm-cl-replay: error: E_OPENCL: clCreateContext failed (" << status << ")\n";
    return 2;
  }
  int failures = 0;
  for (const auto& p : programs) {
    std::ifstream in(p.file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      std::cerr << "prewarm-cl-replay: error: E_INPUT: cannot read " << p.file << '\n';
      return 2;
    }
    const std::string source = text.str();
    const char* pointer = source.data();
    const std::size_t length = source.size();
    const auto started = std::chrono::steady_clock::now();
    cl_program program = clCreateProgramWithSource(context, 1, &pointer, &length, &status);
    if (status == CL_SUCCESS) {
      status = clBuildProgram(program, 1, &device, p.options.c_str(), nullptr, nullptr);
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    if (status == CL_SUCCESS) {
      std::cout << "built\t" << took.count() << '\t' << p.file << '\t' << p.options << std::endl;
    } else {
      ++failures;
      std::cout << "failed\t" << status << '\t' << p.file << '\t' << p.options << std::endl;
      std::cerr << "build log of " << p.file << " [" << p.options << "]:\n";
      if (program != nullptr) {
        std::size_t size = 0;
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
        std::string log(size, '\0');
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
        std::cerr << log << '\n';
      }
    }
    if (program != nullptr) {
      clReleaseProgram(program);
    }
  }
  clReleaseContext(context);
  return failures == 0 ? 0 : 1;
}
