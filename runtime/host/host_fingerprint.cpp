// SPDX-License-Identifier: Apache-2.0
#include "host/host_fingerprint.hpp"

#include "base/digest.hpp"
#include "base/files.hpp"
#include "host/cpu_probe.hpp"
#include "host/host_description_file.hpp"
#include "host/pci_probe.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>
#include <system_error>
#include <vector>

extern char** environ;

namespace prewarm::host {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_small_file = 1 << 20;

// The variables that change what the loaders and drivers enumerate. PoCL's
// and CUDA's cache locations do not (an install may run with either set).
bool
steers_the_probe(std::string_view name)
{
  constexpr std::array prefixes = {"OCL_ICD", "OPENCL_", "POCL_", "ZE_", "CUDA_VISIBLE_DEVICES",
                                   "NVIDIA_VISIBLE_DEVICES", "PREWARM_HOST_DEVICES", "PREWARM_PYTHON",
                                   "LD_LIBRARY_PATH"};
  if (name == "POCL_CACHE_DIR") {
    return false;
  }
  if (name == "PATH") {
    return true; // it finds nvidia-smi and python
  }
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return name.starts_with(p); });
}

// "path size mtime" of what PATH names (symlinks followed), or "path absent".
std::string
identity_of(const fs::path& path)
{
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    return fmt::format("{} absent", path.string());
  }
  std::error_code ec;
  const auto real = fs::canonical(path, ec);
  return fmt::format("{} {} {} {}.{:09}", path.string(), ec ? path.string() : real.string(), st.st_size,
                     st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

std::string
digest_of_file(const fs::path& path)
{
  auto text = read_file(path.string(), k_small_file);
  return text ? sha256_hex(*text) : "absent";
}

// Where the dynamic loader would look for a bare soname, in its order
// (LD_LIBRARY_PATH, then the usual system directories; ld.so.cache itself is
// fingerprinted by content, so a library that only it finds still counts).
std::vector<fs::path>
library_directories()
{
  std::vector<fs::path> dirs;
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) {
    std::string_view rest = ld;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const auto dir = rest.substr(0, colon);
      if (!dir.empty()) {
        dirs.emplace_back(dir);
      }
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
  }
  for (const char* dir : {"/usr/local/lib", "/usr/local/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                          "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib",
                          "/lib"}) {
    dirs.emplace_back(dir);
  }
  return dirs;
}

// The library a dlopen() of NAME would most likely load, identified without
// loading it.
std::string
library_identity(std::string_view name, const std::vector<fs::path>& dirs)
{
  if (name.find('/') != std::string_view::npos) {
    return identity_of(fs::path(name));
  }
  for (const auto& dir : dirs) {
    struct stat st{};
    if (::stat((dir / name).c_str(), &st) == 0) {
      return identity_of(dir / name);
    }
  }
  return fmt::format("{} not-in-usual-directories", name);
}

std::string
first_line(std::string_view text)
{
  const auto end = text.find_first_of("\r\n");
  return std::string(text.substr(0, end));
}

// The first processor's identity (PoCL's device name is derived from it).
std::string
cpu_identity(const fs::path& proc_root)
{
  auto text = read_file((proc_root / "cpuinfo").string(), 4 << 20);
  if (!text) {
    return "absent";
  }
  std::string out;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const auto line = rest.substr(0, end);
    if (line.empty()) {
      break; // end of the first processor's block
    }
    auto key = line.substr(0, line.find(':'));
    key = key.substr(0, key.find_last_not_of(" \t") + 1);
    for (std::string_view wanted : {"vendor_id", "cpu family", "model", "model name", "flags", "CPU implementer",
                                    "CPU part"}) {
      if (key == wanted) {
        out += std::string(line) + ";";
      }
    }
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  return sha256_hex(out);
}

void
add_icd_files(std::string& out, const std::vector<fs::path>& dirs)
{
  const char* configured = std::getenv("OCL_ICD_VENDORS");
  const fs::path vendors = configured && *configured ? fs::path(configured) : fs::path("/etc/OpenCL/vendors");
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(vendors, ec)) {
    for (fs::directory_iterator it(vendors, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (it->path().extension() == ".icd") {
        files.push_back(it->path());
      }
    }
  } else {
    files.push_back(vendors); // ocl-icd also takes one file
  }
  std::sort(files.begin(), files.end());
  out += fmt::format("icd-dir {} {}\n", vendors.string(), files.size());
  for (const auto& file : files) {
    auto text = read_file(file.string(), 4096);
    const auto library = text ? first_line(*text) : std::string();
    out += fmt::format("icd {} {}\n", identity_of(file), library);
    if (!library.empty()) {
      out += fmt::format("icd-library {}\n", library_identity(library, dirs));
    }
  }
  if (const char* extra = std::getenv("OCL_ICD_FILENAMES"); extra && *extra) {
    std::string_view rest = extra;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      out += fmt::format("icd-library {}\n", library_identity(rest.substr(0, colon), dirs));
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
  }
}

} // namespace

std::string
host_fingerprint_text(const HostProbeOptions& options)
{
  std::string out = "prewarm-host-fingerprint 1\n";
  std::vector<std::string> variables;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry = *e;
    if (steers_the_probe(entry.substr(0, entry.find('=')))) {
      variables.emplace_back(entry);
    }
  }
  std::sort(variables.begin(), variables.end());
  for (const auto& v : variables) {
    out += fmt::format("env {}\n", v);
  }
  if (const char* file = std::getenv(std::string(k_host_devices_variable).c_str()); file && *file) {
    // The test double replaces the probe: its content is the whole host.
    out += fmt::format("host-description {}\n", digest_of_file(file));
  }
  out += fmt::format("cpu {}\n", cpu_identity(options.proc_root));
  // The CPU record's own facts (cpu_probe.hpp): the kernel release is not in
  // cpuinfo, and a CPU slice may require it.
  for (const auto& [key, value] : probe_cpu(options.proc_root)) {
    out += fmt::format("{} {}\n", key, value);
  }
  for (const auto& gpu : scan_pci_display_devices(options.sys_root)) {
    out += fmt::format("pci {} {} {} {} {}\n", gpu.address, gpu.vendor_id, gpu.device_id, gpu.revision,
                       gpu.class_code);
  }
  out += fmt::format("nvidia-driver {}\n", digest_of_file(options.proc_root / "driver/nvidia/version"));
  out += fmt::format("ld.so.cache {}\n", digest_of_file("/etc/ld.so.cache"));
  const auto dirs = library_directories();
  add_icd_files(out, dirs);
  // libigc.so.2: NEO's cache keys hash it (intel.igc), and an IGC update
  // need not replace the ICD library.
  std::vector<std::string> loaders = {"libOpenCL.so.1", "libze_loader.so.1", "libze_intel_gpu.so.1", "libigc.so.2"};
  if (const char* alt = std::getenv("ZE_ENABLE_ALT_DRIVERS"); alt && *alt) {
    std::string_view rest = alt;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      loaders.emplace_back(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  for (const auto& name : loaders) {
    out += fmt::format("library {}\n", library_identity(name, dirs));
  }
  if (options.frameworks.wanted) {
    const auto found = find_framework_versions(options.frameworks, options.python, options.timeout);
    out += fmt::format("framework-source {}\n", found.source);
    for (const auto& [name, version] : found.versions) {
      out += fmt::format("framework {} {}\n", name, version);
    }
  }
  return out;
}

std::string
host_fingerprint(const HostProbeOptions& options)
{
  return sha256_hex(host_fingerprint_text(options));
}

} // namespace prewarm::host
