// SPDX-License-Identifier: Apache-2.0
// Program store: OpenCL program binaries on disk, keyed by everything that
// decides whether a binary is valid for a build. The key and the on-disk
// format are store/program_record.hpp (shared with the OpenCL layer, which
// cannot link this file's OpenCL calls); this class builds programs through
// them for prewarm's own engine.
#pragma once

#include "base/error.hpp"
#include "opencl/cl.hpp"
#include "opencl/device.hpp"
#include "opencl/owned.hpp"
#include "store/program_record.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace prewarm::store {

enum class StoreMode { read_only, read_write };

enum class Outcome {
  hit,      // served from the store
  miss,     // not in the store (or no store): built from source
  rejected, // in the store but unusable (meta mismatch, corrupt binary, driver refused it): built from source
};
std::string_view to_string(Outcome outcome);

struct BuiltProgram
{
  opencl::UniqueProgram program;
  Outcome outcome = Outcome::miss;
  std::string reason; // why rejected / missed, for logs
  std::string key;
};

struct StoreCounters
{
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t rejected = 0;
  std::uint64_t captured = 0;
};

class ProgramStore
{
public:
  // read_write creates `dir` if needed; read_only requires nothing (an absent
  // directory is an empty store).
  static Result<ProgramStore> open(const std::filesystem::path& dir, StoreMode mode);

  ProgramStore(ProgramStore&&) noexcept;
  ProgramStore& operator=(ProgramStore&&) noexcept;
  ProgramStore(const ProgramStore&) = delete;
  ProgramStore& operator=(const ProgramStore&) = delete;
  ~ProgramStore();

  // Builds `source` for `device`: from the stored binary when there is a
  // valid one (hit), otherwise from source (miss/rejected). A stored binary
  // that fails in any way is released, logged and replaced by a source build;
  // only a failing source build is an error.
  Result<BuiltProgram> build_program(cl_context context,
                                     const opencl::DeviceRef& device,
                                     std::string_view source,
                                     std::string_view options);

  // Stores CL_PROGRAM_BINARIES of a program this store built. Call it AFTER
  // the program's kernels ran: PoCL compiles work-group-size specialisations
  // lazily at the first enqueue and only then includes them in the binary.
  // A hit is rewritten only if its binary changed (new specialisations);
  // counters().captured counts files written. read_only: no-op.
  Status capture(cl_program program);
  // capture() for every program built and not yet captured.
  Status capture_all();

  const StoreCounters& counters() const { return m_counters; }
  const std::filesystem::path& dir() const { return m_dir; }
  StoreMode mode() const { return m_mode; }

  std::filesystem::path binary_path(std::string_view key) const;
  std::filesystem::path meta_path(std::string_view key) const;

private:
  ProgramStore(std::filesystem::path dir, StoreMode mode);

  struct Pending
  {
    opencl::UniqueProgram program; // a retained reference until capture
    ProgramKey key;
    std::string stored_binary; // for a hit: what the store holds now
  };

  std::filesystem::path m_dir;
  StoreMode m_mode;
  StoreCounters m_counters;
  std::map<cl_program, Pending> m_pending;
};

} // namespace prewarm::store
