// SPDX-License-Identifier: Apache-2.0
#include "aot/toolchains.hpp"

#include "base/encoding.hpp"
#include "base/log.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <system_error>

namespace prewarm::aot {

namespace fs = std::filesystem;

fs::path
intel_root()
{
  const char* value = std::getenv(std::string(k_intel_root_variable).c_str());
  if (value == nullptr || *value == '\0') {
    return fs::path(k_default_intel_root);
  }
  if (std::string_view(value) == "none") {
    return {};
  }
  return fs::path(value);
}

bool
intel_root_complete(const fs::path& root)
{
  std::error_code ec;
  return !root.empty() && fs::is_regular_file(root / ".complete", ec) &&
         ::access((root / "host-bin" / "ocloc").c_str(), X_OK) == 0;
}

std::string
describe(const Toolchain& toolchain)
{
  return fmt::format("ocloc {} ({})", toolchain.ocloc.driver_version(), toolchain.origin);
}

namespace {

// Two routes to one executable (the root's wrapper linked into PATH as
// `ocloc`) are one toolchain.
fs::path
identity_of(const fs::path& executable)
{
  std::error_code ec;
  auto canonical = fs::canonical(executable, ec);
  return ec ? executable : canonical;
}

void
add(std::vector<Toolchain>& out, const fs::path& executable, std::string origin, manifest::OclocSource source)
{
  for (const auto& known : out) {
    if (identity_of(known.ocloc.executable()) == identity_of(executable)) {
      return;
    }
  }
  auto ocloc = Ocloc::at(executable);
  if (!ocloc) {
    log::verbose("ocloc {} ({}): {}", executable.string(), origin, ocloc.error().message());
    return;
  }
  out.push_back(Toolchain{std::move(*ocloc), std::move(origin), source});
}

} // namespace

std::vector<Toolchain>
locate_toolchains()
{
  std::vector<Toolchain> out;
  if (const char* over = std::getenv("PREWARM_OCLOC"); over != nullptr && *over != '\0') {
    add(out, over, "PREWARM_OCLOC", manifest::OclocSource::environment);
    return out;
  }
  if (auto host = find_host_ocloc()) {
    add(out, *host, "host", manifest::OclocSource::host);
  }
  const auto root = intel_root();
  if (intel_root_complete(root)) {
    add(out, root / "host-bin" / "ocloc", fmt::format("Intel root {}", root.string()), manifest::OclocSource::intel_root);
  } else if (!root.empty()) {
    log::verbose("Intel root {}: not made (./setup.sh intel-root makes it)", root.string());
  }
  return out;
}

Result<const Toolchain*>
ToolchainChooser::for_device(std::string_view device)
{
  std::lock_guard lock(m_mutex);
  if (!m_located) {
    m_toolchains = locate_toolchains();
    m_located = true;
  }
  if (const auto it = m_chosen.find(device); it != m_chosen.end()) {
    return &m_toolchains[it->second];
  }
  if (m_toolchains.empty()) {
    if (const char* over = std::getenv("PREWARM_OCLOC"); over != nullptr && *over != '\0') {
      return fail(Errc::usage, fmt::format("PREWARM_OCLOC={}: not a working ocloc", in_quotes(over)),
                  "E_OCLOC_MISSING");
    }
    return fail(Errc::failed,
                "no ocloc: none on PATH or at /usr/bin/ocloc, and no Intel root (install intel-opencl-icd, "
                "run ./setup.sh intel-root, or set PREWARM_OCLOC to the executable)",
                "E_OCLOC_MISSING");
  }
  std::vector<std::string> tried;
  for (std::size_t i = 0; i < m_toolchains.size(); ++i) {
    PW_ASSIGN(const auto known, m_toolchains[i].ocloc.lookup_device(device));
    if (known.known) {
      m_chosen.emplace(std::string(device), i);
      return &m_toolchains[i];
    }
    tried.push_back(describe(m_toolchains[i]));
  }
  return fail(Errc::usage,
              fmt::format("no ocloc knows '{}': tried {} (run ./setup.sh intel-root for compute runtime 26.27, or "
                          "set PREWARM_OCLOC to a newer ocloc)",
                          device, fmt::join(tried, ", ")),
              "E_AOT_UNKNOWN_DEVICE");
}

} // namespace prewarm::aot
