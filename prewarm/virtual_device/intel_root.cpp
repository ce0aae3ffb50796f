// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/intel_root.hpp"

#include "aot/toolchains.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace prewarm::virtual_device {

namespace fs = std::filesystem;

namespace {

// The libraries NEO probes for that must not load from the build host (see the header).
Result<std::shared_ptr<const TempDir>>
pinned_libraries()
{
  PW_ASSIGN(auto dir, TempDir::create("prewarm-intel-pins-"));
  const auto libva = dir.path() / "libva.so.2";
  PW_TRY_CTX(fmt::format("writing {}", libva.string()), write_file_atomic(libva, "", 0644, Durability::none));
  return std::make_shared<const TempDir>(std::move(dir));
}

} // namespace

Result<IntelRoot>
IntelRoot::locate()
{
  const auto dir = aot::intel_root();
  if (dir.empty()) {
    return fail(Errc::failed, fmt::format("{}=none: no Intel root", aot::k_intel_root_variable), "E_INTEL_ROOT");
  }
  return at(dir);
}

Result<IntelRoot>
IntelRoot::at(const fs::path& dir)
{
  const auto missing = [&](std::string_view what) {
    return fail(Errc::failed,
                fmt::format("Intel root {}: {} (make it with `./setup.sh intel-root`, or set {} to a root that "
                            "carries intel-opencl-icd and libigc2)",
                            dir.string(), what, aot::k_intel_root_variable),
                "E_INTEL_ROOT");
  };
  auto packages = read_file((dir / ".complete").string(), 64 * 1024);
  if (!packages) {
    return missing("not made, or not complete (no .complete)");
  }
  PW_ASSIGN(auto pins, pinned_libraries());
  IntelRoot root(dir, std::move(*packages), std::move(pins));
  if (::access(root.loader().c_str(), X_OK) != 0) {
    return missing("no dynamic loader lib64/ld-linux-x86-64.so.2");
  }
  if (::access(root.opencl_icd().c_str(), R_OK) != 0) {
    return missing("no NEO OpenCL ICD (intel-opencl-icd)");
  }
  if (::access(root.igc_library().c_str(), R_OK) != 0) {
    return missing("no libigc.so.2 (libigc2)");
  }
  return root;
}

fs::path
IntelRoot::loader() const
{
  return m_dir / "lib64/ld-linux-x86-64.so.2";
}

fs::path
IntelRoot::library_dir() const
{
  return m_dir / "usr/lib/x86_64-linux-gnu";
}

std::string
IntelRoot::library_path() const
{
  return fmt::format("{}:{}:{}", m_pins->path().string(), library_dir().string(),
                     (m_dir / "lib/x86_64-linux-gnu").string());
}

fs::path
IntelRoot::opencl_icd() const
{
  return library_dir() / "intel-opencl/libigdrcl.so";
}

fs::path
IntelRoot::level_zero_driver() const
{
  return library_dir() / "libze_intel_gpu.so.1";
}

fs::path
IntelRoot::igc_library() const
{
  return library_dir() / "libigc.so.2";
}

std::string
IntelRoot::package_version(std::string_view package) const
{
  std::string_view rest = m_packages;
  while (!rest.empty()) {
    const auto newline = rest.find('\n');
    const auto line = rest.substr(0, newline);
    if (line.size() > package.size() && line.starts_with(package) && line[package.size()] == ' ') {
      return std::string(line.substr(package.size() + 1));
    }
    rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
  }
  return {};
}

Result<std::string>
IntelRoot::driver_release() const
{
  const auto package = package_version("intel-opencl-icd");
  unsigned major = 0;
  unsigned minor = 0;
  unsigned build = 0;
  if (std::sscanf(package.c_str(), "%u.%u.%u", &major, &minor, &build) != 3) {
    return fail(Errc::failed,
                fmt::format("the Intel root {} lists no intel-opencl-icd version in its .complete (found {})",
                            m_dir.string(), package.empty() ? "none" : in_quotes(package)),
                "E_INTEL_ROOT");
  }
  return fmt::format("{}.{}.{:06}", major, minor, build);
}

std::vector<std::string>
IntelRoot::command(const fs::path& program, std::vector<std::string> arguments, HostLibraries libraries) const
{
  const auto path = libraries == HostLibraries::pinned
                      ? library_path()
                      : fmt::format("{}:{}", library_dir().string(), (m_dir / "lib/x86_64-linux-gnu").string());
  std::vector<std::string> argv = {loader().string(), "--library-path", path, program.string()};
  argv.insert(argv.end(), std::make_move_iterator(arguments.begin()), std::make_move_iterator(arguments.end()));
  return argv;
}

Result<process::Environment>
IntelRoot::opencl_environment(const fs::path& vendors_dir) const
{
  std::error_code ec;
  fs::create_directories(vendors_dir, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("creating {}: {}", vendors_dir.string(), ec.message()));
  }
  PW_TRY_CTX(fmt::format("writing {}", (vendors_dir / "neo.icd").string()),
             write_file_atomic(vendors_dir / "neo.icd", opencl_icd().string() + "\n", 0644, Durability::none));
  return process::Environment{{"OCL_ICD_VENDORS", vendors_dir.string()},
                              // Level Zero: the root's GPU driver alone.
                              {"ZE_ENABLE_ALT_DRIVERS", level_zero_driver().string()}};
}

} // namespace prewarm::virtual_device
