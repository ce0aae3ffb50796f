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

constexpr std::string_view k_binary_digest_field = "binary-sha256 ";

// One value per line: a newline inside a value must not start a new field.
std::string
escape_value(std::string_view value)
{
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

std::string
property(const opencl::DeviceRef& device, std::string_view key)
{
  const auto it = device.properties.find(key);
  return it == device.properties.end() ? std::string{} : it->second;
}

std::string
meta_text(const ProgramKey& key, std::string_view binary)
{
  return key.canonical_text() + std::string(k_binary_digest_field) + sha256_hex(binary) + "\n";
}

struct Loaded
{
  opencl::UniqueProgram program;
  std::string binary;
};

// A stored binary, checked and built; any error is the rejection reason.
Result<Loaded>
load_stored(const ProgramStore& store,
            const ProgramKey& key,
            const std::string& digest,
            cl_context context,
            cl_device_id device)
{
  PW_ASSIGN(const auto meta, read_file(store.meta_path(digest).string(), 1 << 20));
  const auto expected_key = key.canonical_text();
  if (!meta.starts_with(expected_key)) {
    return fail(Errc::verify, "the stored key text differs from this build's", "E_STORE_META");
  }
  std::string_view rest = std::string_view(meta).substr(expected_key.size());
  if (!rest.starts_with(k_binary_digest_field) || !rest.ends_with('\n')) {
    return fail(Errc::verify, "the meta file has no binary digest line", "E_STORE_META");
  }
  rest.remove_prefix(k_binary_digest_field.size());
  rest.remove_suffix(1);
  PW_ASSIGN(auto binary, read_file(store.binary_path(digest).string(), std::uint64_t{1} << 30));
  if (sha256_hex(binary) != rest) {
    return fail(Errc::verify, "the binary's SHA-256 differs from the one recorded in its meta file", "E_STORE_DIGEST");
  }
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

ProgramKey
ProgramKey::for_device(const opencl::DeviceRef& device, std::string_view source, std::string_view options, SourceKind kind)
{
  ProgramKey key;
  key.source_sha256 = sha256_hex(source);
  key.source_kind = kind;
  key.options = std::string(options);
  key.platform = property(device, prop::opencl_platform);
  key.platform_version = property(device, prop::opencl_platform_version);
  key.device = property(device, prop::opencl_device);
  key.device_version = property(device, prop::opencl_device_version);
  key.driver = property(device, prop::opencl_driver);
  key.vendor = property(device, prop::vendor);
  return key;
}

std::string
ProgramKey::canonical_text() const
{
  return fmt::format("format {}\n"
                     "source-sha256 {}\n"
                     "source-kind {}\n"
                     "options {}\n"
                     "platform {}\n"
                     "platform-version {}\n"
                     "device {}\n"
                     "device-version {}\n"
                     "driver {}\n"
                     "vendor {}\n",
                     k_store_format,
                     escape_value(source_sha256),
                     source_kind == SourceKind::source ? "source" : "il",
                     escape_value(options),
                     escape_value(platform),
                     escape_value(platform_version),
                     escape_value(device),
                     escape_value(device_version),
                     escape_value(driver),
                     escape_value(vendor));
}

std::string
ProgramKey::digest() const
{
  return sha256_hex(canonical_text());
}

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
  return m_dir / std::string(key.substr(0, 2)) / (std::string(key) + ".bin");
}

std::filesystem::path
ProgramStore::meta_path(std::string_view key) const
{
  return m_dir / std::string(key.substr(0, 2)) / (std::string(key) + ".meta");
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
    auto loaded = load_stored(*this, key, built.key, context, device.device);
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
  const auto digest = pending.key.digest();
  std::error_code ec;
  std::filesystem::create_directories(binary_path(digest).parent_path(), ec);
  if (ec) {
    return fail(Errc::failed,
                fmt::format("program store: cannot create {}: {}", in_quotes(binary_path(digest).parent_path().string()), ec.message()));
  }
  // The binary first: a meta without its binary would be a rejection on
  // every load, a binary without its meta is just a miss.
  PW_TRY_CTX("program store", write_file_atomic(binary_path(digest), binary, 0644, Durability::none));
  PW_TRY_CTX("program store", write_file_atomic(meta_path(digest), meta_text(pending.key, binary), 0644, Durability::none));
  ++m_counters.captured;
  log::verbose("program store: captured {} ({} bytes)", digest, binary.size());
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
