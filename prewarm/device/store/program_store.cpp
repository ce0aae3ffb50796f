// SPDX-License-Identifier: Apache-2.0
#include "store/program_store.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "opencl/check.hpp"
#include "opencl/program.hpp"

#include <fmt/format.h>

#include <system_error>

namespace prewarm::store {
namespace {

struct Loaded
{
  opencl::UniqueProgram program;
  std::string binary;
};

// A stored binary, checked and built; any error is the rejection reason.
Result<Loaded>
load_stored(const ProgramStore& store,
            const ProgramKey& key,
            cl_context context,
            cl_device_id device)
{
  PW_ASSIGN(auto binary, read_record(store.dir(), key));
  const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  const std::size_t size = binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int status = CL_SUCCESS;
  opencl::UniqueProgram program(clCreateProgramWithBinary(context, 1, &device, &size, &bytes, &binary_status, &status));
  PW_TRY(opencl::check(status, "clCreateProgramWithBinary"));
  PW_TRY(opencl::check(binary_status, "clCreateProgramWithBinary (binary status)"));
  PW_TRY(opencl::build(program.get(), device, key.options));
  return Loaded{std::move(program), std::move(binary)};
}

} // namespace

std::string_view
to_string(Outcome outcome)
{
  switch (outcome) {
    case Outcome::hit:
      return "hit";
    case Outcome::miss:
      return "miss";
    case Outcome::rejected:
      return "rejected";
  }
  return "?";
}

ProgramStore::ProgramStore(std::filesystem::path dir, StoreMode mode) : m_dir(std::move(dir)), m_mode(mode) {}
ProgramStore::ProgramStore(ProgramStore&&) noexcept = default;
ProgramStore& ProgramStore::operator=(ProgramStore&&) noexcept = default;
ProgramStore::~ProgramStore() = default;

Result<ProgramStore>
ProgramStore::open(const std::filesystem::path& dir, StoreMode mode)
{
  if (dir.empty()) {
    return fail(Errc::usage, "program store: empty directory name");
  }
  std::error_code ec;
  if (mode == StoreMode::read_write) {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return fail(Errc::failed, fmt::format("program store {}: cannot create: {}", in_quotes(dir.string()), ec.message()));
    }
  }
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    return fail(Errc::usage, fmt::format("program store {}: not a directory", in_quotes(dir.string())));
  }
  return ProgramStore(dir, mode);
}

std::filesystem::path
ProgramStore::binary_path(std::string_view key) const
{
  return record_binary_path(m_dir, key);
}

std::filesystem::path
ProgramStore::meta_path(std::string_view key) const
{
  return record_meta_path(m_dir, key);
}

Result<BuiltProgram>
ProgramStore::build_program(cl_context context,
                            const opencl::DeviceRef& device,
                            std::string_view source,
                            std::string_view options)
{
  auto key = ProgramKey::for_device(device, source, options);
  BuiltProgram built;
  built.key = key.digest();

  std::error_code ec;
  std::string stored_binary;
  if (std::filesystem::exists(meta_path(built.key), ec)) {
    auto loaded = load_stored(*this, key, context, device.device);
    if (loaded) {
      built.program = std::move(loaded->program);
      built.outcome = Outcome::hit;
      stored_binary = std::move(loaded->binary);
      ++m_counters.hits;
      log::verbose("program store: hit {}", built.key);
    } else {
      built.outcome = Outcome::rejected;
      built.reason = loaded.error().message();
      ++m_counters.rejected;
      log::warn("program store: stored binary {} rejected, building from source: {}", built.key, built.reason);
    }
  } else {
    built.outcome = Outcome::miss;
    built.reason = "not in the store";
    ++m_counters.misses;
    log::verbose("program store: miss {}", built.key);
  }

  if (built.outcome != Outcome::hit) {
    PW_ASSIGN(built.program, opencl::build_from_source(context, device.device, source, options));
  }
  if (m_mode == StoreMode::read_write) {
    m_pending.insert_or_assign(built.program.get(),
                               Pending{opencl::UniqueProgram::share(built.program.get()), std::move(key), std::move(stored_binary)});
  }
  return built;
}

Status
ProgramStore::capture(cl_program program)
{
  if (m_mode == StoreMode::read_only) {
    return {};
  }
  const auto it = m_pending.find(program);
  if (it == m_pending.end()) {
    return fail(Errc::internal, "program store: capture() of a program this store did not build");
  }
  Pending pending = std::move(it->second);
  m_pending.erase(it);

  PW_ASSIGN_CTX(const auto binary, "program store: reading the program binary", opencl::program_binary(program));
  if (!pending.stored_binary.empty() && pending.stored_binary == binary) {
    return {}; // a hit that learnt nothing new
  }
  PW_TRY(write_record(m_dir, pending.key, binary));
  ++m_counters.captured;
  log::verbose("program store: captured {} ({} bytes)", pending.key.digest(), binary.size());
  return {};
}

Status
ProgramStore::capture_all()
{
  std::vector<cl_program> programs;
  for (const auto& [program, pending] : m_pending) {
    programs.push_back(program);
  }
  Status first_error;
  for (cl_program program : programs) {
    if (auto status = capture(program); !status && first_error) {
      first_error = std::move(status);
    }
  }
  return first_error;
}

} // namespace prewarm::store
