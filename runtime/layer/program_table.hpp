// SPDX-License-Identifier: Apache-2.0
// What the layer knows about the application's programs and kernels. One
// mutex guards the maps; it is never held across a driver call (a driver
// may call back into the application, which may call OpenCL again).
//
// A tracked program is the application's own handle, created from source or
// IL and never replaced:
//   - served by a build: `shadow` is a second program made from the stored
//     binaries; kernels and build queries go to it, CL_KERNEL_PROGRAM maps
//     back to the application's handle, and each kernel holds a reference
//     on the application's program as it would on an unshadowed one;
//   - served by a compile: `virtual_compile` (nothing compiled yet; build
//     status, log and binary type are answered from the record), compiled
//     for real only when a link misses or a query needs it;
//   - recorded: `keys` name the records its binaries are written to.
#pragma once

#include "layer/cl_layer_api.hpp"
#include "store/program_record.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace prewarm::layer {

struct SpecConstant
{
  cl_uint id = 0;
  std::string value;
};

struct HeaderInput
{
  cl_program program = nullptr; // retained while the compile is virtual
  std::string name;
};

struct VirtualCompile
{
  std::vector<cl_device_id> devices;
  std::string options;
  std::vector<HeaderInput> headers;
  std::string log; // the recorded build log
};

struct TrackedProgram
{
  cl_context context = nullptr;
  store::SourceKind kind = store::SourceKind::source;
  std::string payload;         // source text or IL bytes
  std::string payload_sha256;
  std::vector<SpecConstant> spec_constants; // in the order set (a later id replaces)
  cl_program shadow = nullptr; // served build: the program made from stored binaries
  std::optional<VirtualCompile> virtual_compile;
  // The key per device of the compile (for links) or build (for capture).
  std::vector<cl_device_id> key_devices;
  std::vector<store::ProgramKey> keys;
  std::string build_options;   // of the recorded clBuildProgram or clLinkProgram
  // Record mode, a program linked on PoCL: its compiled inputs, retained by
  // the layer until the capture at release links them again
  // (program_binaries.hpp).
  std::vector<cl_program> link_inputs;
  // The application's own references: 1 at creation, + clRetainProgram,
  // - clReleaseProgram. The layer holds one more for as long as it tracks
  // the program (ProgramTable::put), so a tracked handle is never a freed
  // one: a driver may drop its own last reference on another thread, after
  // the application's last release (PoCL's worker threads do).
  unsigned application_references = 1;
  bool compiled = false;       // keys are compile keys (an input for clLinkProgram)
  bool record_at_release = false;
  // The include part of the keys (program_keys.hpp) as resolved at the build
  // or compile, with what it was resolved from: a capture resolves it again
  // and stores nothing when an included file changed meanwhile.
  std::string includes_digest; // empty: the source includes nothing
  std::string include_options;
  std::vector<std::pair<std::string, std::string>> embedded_headers; // a compile's (name, source)
};

class ProgramTable
{
public:
  static ProgramTable& instance();

  // Copies, so the caller can call drivers without the lock.
  std::optional<TrackedProgram> find(cl_program program) const;
  // Starts tracking `program` and takes the layer's reference on it.
  void put(cl_program program, TrackedProgram tracked);
  // The application retains a tracked program (false: not tracked).
  bool retain(cl_program program);
  // The application releases a tracked program: its last reference returns
  // what the layer knew, no longer tracked; the caller captures what it
  // captures and then drops the layer's reference (drop_reference).
  std::optional<TrackedProgram> release(cl_program program);
  bool tracks(cl_program program) const;
  template<typename Change>
  bool update(cl_program program, Change&& change)
  {
    std::lock_guard lock(m_mutex);
    const auto it = m_programs.find(program);
    if (it == m_programs.end()) {
      return false;
    }
    change(it->second);
    return true;
  }

  cl_program shadow_of(cl_program program) const; // or `program` itself
  bool is_virtual(cl_program program) const;

  // Programs of `context` waiting for a capture at release; every context's
  // when `context` is null (the capture at exit).
  std::vector<std::pair<cl_program, TrackedProgram>> recorded_in(cl_context context) const;

  void put_kernel(cl_kernel kernel, cl_program application_program);
  cl_program kernel_program(cl_kernel kernel) const; // null when not a shadow's kernel
  cl_program take_kernel(cl_kernel kernel);

private:
  mutable std::mutex m_mutex;
  std::map<cl_program, TrackedProgram> m_programs;
  std::map<cl_kernel, cl_program> m_kernels;
};

} // namespace prewarm::layer
