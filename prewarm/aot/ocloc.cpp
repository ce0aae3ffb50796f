// SPDX-License-Identifier: Apache-2.0
#include "aot/ocloc.hpp"
#include "aot/shared_ocloc_runs.hpp"

#include "aot/process.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace prewarm::aot {

namespace fs = std::filesystem;

namespace {

// ocloc 22.43 ends the OCL_DRIVER_VERSION file with " \0".
constexpr std::string_view k_blank{" \t\r\n\0", 5};

// The last non-empty line of ocloc's output: where it puts the reason.
std::string
last_line(std::string_view text)
{
  std::string trimmed(trim(text, k_blank));
  const auto nl = trimmed.find_last_of('\n');
  return nl == std::string::npos ? trimmed : std::string(trim(std::string_view(trimmed).substr(nl + 1), k_blank));
}

// Why `ocloc validate` rejected a binary, on one line: the lines under its
// "Validator detected errors :" heading (ocloc 26.27 prints its warnings,
// e.g. "Unhandled SHT_NOTE section", under another heading first), else
// its last line.
std::string
validation_reason(std::string_view report)
{
  constexpr std::string_view k_errors = "Validator detected errors :";
  const auto at = report.find(k_errors);
  if (at == std::string_view::npos) {
    return last_line(report);
  }
  std::string reason;
  std::string_view rest = report.substr(at + k_errors.size());
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    const auto line = trim(rest.substr(0, nl), k_blank);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    if (line.starts_with("Binary is ") || line.starts_with("Validator detected ")) {
      break;
    }
    if (!line.empty()) {
      reason += (reason.empty() ? "" : "; ") + std::string(line);
    }
  }
  return reason.empty() ? last_line(report) : reason;
}

std::optional<fs::path>
find_on_path(std::string_view name)
{
  const char* path = std::getenv("PATH");
  if (path == nullptr) {
    return std::nullopt;
  }
  std::string_view rest(path);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const auto dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    if (dir.empty()) {
      continue;
    }
    fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

Result<std::string>
query_driver_version(const fs::path& executable)
{
  PW_ASSIGN(auto scratch, TempDir::create("prewarm-ocloc-"));
  std::vector<std::string> argv{executable.string(), "query", "OCL_DRIVER_VERSION"};
  PW_ASSIGN(auto run, run_process(argv, scratch.path()));
  auto file = read_file((scratch.path() / "OCL_DRIVER_VERSION").string(), 4096);
  // 22.43 writes the file; a later ocloc might print to stdout instead.
  std::string version(file ? trim(*file, k_blank) : trim(run.output, k_blank));
  if (!run.succeeded() || version.empty()) {
    return fail(Errc::failed,
                fmt::format("{} query OCL_DRIVER_VERSION failed ({}): {}",
                            executable.string(), run.describe(), last_line(run.output)));
  }
  return version;
}

} // namespace

bool
is_single_device_name(std::string_view name)
{
  if (name.empty() || name.size() > 64 || name.front() == '-') {
    return false;
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) {
      return false;
    }
  }
  return true;
}

std::optional<fs::path>
find_host_ocloc()
{
  if (auto on_path = find_on_path("ocloc")) {
    return on_path;
  }
  if (::access("/usr/bin/ocloc", X_OK) == 0) {
    return fs::path("/usr/bin/ocloc");
  }
  return std::nullopt;
}

Result<Ocloc>
Ocloc::locate()
{
  if (const char* over = std::getenv("PREWARM_OCLOC"); over != nullptr && *over != '\0') {
    if (::access(over, X_OK) != 0) {
      return fail(Errc::usage, fmt::format("PREWARM_OCLOC={}: not an executable file", in_quotes(over)));
    }
    return at(over);
  }
  if (auto host = find_host_ocloc()) {
    return at(*host);
  }
  return fail(Errc::failed,
              "ocloc not found on PATH or at /usr/bin/ocloc (install intel-opencl-icd, or set "
              "PREWARM_OCLOC to the executable)",
              "E_OCLOC_MISSING");
}

Result<Ocloc>
Ocloc::at(const fs::path& executable)
{
  PW_ASSIGN(auto version, query_driver_version(executable));
  return Ocloc(executable, std::move(version));
}

Result<OclocDevice>
Ocloc::lookup_device(std::string_view name) const
{
  OclocDevice device;
  device.name = std::string(name);
  if (!is_single_device_name(name)) {
    device.reason = fmt::format("{} is not a single ocloc device name", in_quotes(name));
    return device;
  }
  PW_ASSIGN(auto scratch, TempDir::create("prewarm-ocloc-"));
  std::vector<std::string> argv{m_executable.string(), "ids", std::string(name)};
  PW_ASSIGN(auto run, run_process(argv, scratch.path()));
  const auto marker = run.output.find("Matched ids:");
  if (run.succeeded() && marker != std::string::npos) {
    // The first line after the marker is the IP version ("12.56.5").
    std::string_view rest = std::string_view(run.output).substr(marker + 12);
    rest.remove_prefix(std::min(rest.find_first_not_of(" \r\n"), rest.size()));
    device.ip_version = trim(rest.substr(0, rest.find('\n')), k_blank);
    device.known = true;
    return device;
  }
  device.reason = fmt::format("ocloc {} does not know {}: {}", m_driver_version, in_quotes(name),
                              last_line(run.output));
  return device;
}

namespace {

// 26.27 reports every good compile with "Build succeeded." (22.43 says
// nothing): not a message worth keeping in a report.
std::string
without_success_line(std::string log)
{
  constexpr std::string_view k_success = "Build succeeded.";
  if (log.ends_with(k_success)) {
    log.resize(log.size() - k_success.size());
    log = std::string(trim(log, k_blank));
  }
  return log;
}

Result<OclocOutput>
run_compile(const fs::path& executable, const OclocCompileRequest& request, bool spirv_only)
{
  if (!is_single_device_name(request.device)) {
    return fail(Errc::usage, fmt::format("ocloc compile of {}: {} is not a single device name",
                                         request.source_name, in_quotes(request.device)));
  }
  PW_ASSIGN(auto scratch, TempDir::create("prewarm-ocloc-"));
  // Fixed, relative names: nothing about the scratch directory can reach the
  // output, so the bytes depend on source, options and device only.
  const std::string file = request.input == OclocInput::opencl_c ? "source.cl" : "source.ir";
  PW_TRY(write_file_atomic(scratch.path() / file, request.source, 0600, Durability::none));
  std::vector<std::string> argv{executable.string(), "compile", "-file", file,
                                "-device", request.device, "-output", "program", "-output_no_suffix"};
  if (request.input == OclocInput::spirv) {
    argv.emplace_back("-spirv_input");
  } else if (request.input == OclocInput::llvm_bitcode) {
    argv.emplace_back("-llvm_input");
  }
  if (!request.internal_options.empty()) {
    argv.insert(argv.end(), {"-internal_options", request.internal_options});
  }
  if (!request.stateful_address_mode.empty()) {
    argv.insert(argv.end(), {"-stateful_address_mode", request.stateful_address_mode});
  }
  if (spirv_only) {
    argv.emplace_back("-spv_only");
  } else {
    argv.insert(argv.end(), {"--format", "zebin"});
  }
  if (!request.options.empty()) {
    argv.insert(argv.end(), {"-options", request.options});
  }
  PW_ASSIGN(auto run, run_process(argv, scratch.path()));
  if (!run.succeeded()) {
    return fail(Errc::failed, fmt::format("ocloc compile of {} for {} with options {} failed ({}):\n{}",
                                          request.source_name, request.device,
                                          in_quotes(request.options), run.describe(), trim(run.output, k_blank)));
  }
  OclocOutput output;
  output.log = without_success_line(std::string(trim(run.output, k_blank)));
  if (!spirv_only) {
    // 22.43 names the binary exactly as -output says; 26.27 appends ".bin"
    // even with -output_no_suffix (without it, it would be program_<device>.bin).
    const auto binary = fs::exists(scratch.path() / "program") ? scratch.path() / "program"
                                                                : scratch.path() / "program.bin";
    PW_ASSIGN_CTX(output.zebin, "reading ocloc's binary", read_file(binary.string()));
  }
  if (request.input == OclocInput::opencl_c) { // from IR, ocloc writes no SPIR-V of its own
    PW_ASSIGN_CTX(output.spirv, "reading ocloc's SPIR-V", read_file((scratch.path() / "program.spv").string()));
  }
  return output;
}

// Everything a compile's output depends on (shared_ocloc_runs.hpp).
std::string
compile_key(const Ocloc& ocloc, const OclocCompileRequest& request, bool spirv_only)
{
  return run_key({ocloc.executable().native(), ocloc.driver_version(), spirv_only ? "spirv" : "binary",
                  std::to_string(static_cast<int>(request.input)), request.device, request.options,
                  request.internal_options, request.stateful_address_mode, request.source});
}

} // namespace

Result<OclocOutput>
Ocloc::compile(const OclocCompileRequest& request) const
{
  return shared_output_run(compile_key(*this, request, false),
                           [&] { return run_compile(m_executable, request, false); });
}

Result<std::string>
Ocloc::compile_spirv(const OclocCompileRequest& request) const
{
  PW_ASSIGN(auto output, shared_output_run(compile_key(*this, request, true),
                                           [&] { return run_compile(m_executable, request, true); }));
  return std::move(output.spirv);
}

Result<OclocValidation>
Ocloc::validate(std::string_view zebin, std::string_view device) const
{
  return shared_validation_run(run_key({m_executable.native(), m_driver_version, "validate", device, zebin}),
                               [&] { return run_validate(zebin, device); });
}

Result<OclocValidation>
Ocloc::run_validate(std::string_view zebin, std::string_view device) const
{
  if (!is_single_device_name(device)) {
    return fail(Errc::usage, fmt::format("ocloc validate: {} is not a single device name", in_quotes(device)));
  }
  PW_ASSIGN(auto scratch, TempDir::create("prewarm-ocloc-"));
  PW_TRY(write_file_atomic(scratch.path() / "program.zebin", zebin, 0600, Durability::none));
  std::vector<std::string> argv{m_executable.string(), "validate", "-file", "program.zebin",
                                "-device", std::string(device)};
  PW_ASSIGN(auto run, run_process(argv, scratch.path()));
  OclocValidation validation;
  validation.exit_code = run.ending == process::Outcome::Ending::exited ? run.exit_status : -1;
  validation.output = trim(run.output, k_blank);
  validation.valid = run.succeeded() && validation.output.find("Binary is VALID") != std::string::npos;
  if (!validation.valid) {
    validation.reason = validation_reason(validation.output);
  }
  return validation;
}

} // namespace prewarm::aot
