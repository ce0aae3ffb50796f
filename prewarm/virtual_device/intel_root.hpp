// SPDX-License-Identifier: Apache-2.0
// The Intel root: a directory tree of another distribution (Debian sid, made
// by `./setup.sh intel-root`) carrying an Intel compute runtime newer than
// the build host's: NEO's OpenCL ICD and Level Zero driver, IGC, the ICD and
// Level Zero loaders. Its binaries need its own glibc, so a program runs
// against it through the root's own dynamic loader with the root's library
// directories first (no chroot: host paths keep working):
//   ROOT/lib64/ld-linux-x86-64.so.2 --library-path ROOT/usr/lib/x86_64-linux-gnu:ROOT/lib/x86_64-linux-gnu PROGRAM ARGS
// The OpenCL ICD loader is pointed at the root's NEO through a vendors
// directory of our own: the root's intel.icd names /usr/lib/..., which on the
// host is the host's (older) ICD, and ocl-icd 2.3 ignores OCL_ICD_FILENAMES
// when OCL_ICD_VENDORS names a directory.
//
// What NEO lists never depends on the build host's libraries: NEO lists
// cl_intel_va_api_media_sharing where dlopen("libva.so.2") succeeds
// (opencl/source/sharings/va/enable_va.cpp:60-66, no debug key turns that
// test off), and the root's loader would find the HOST's libva through the
// host's ld.so.cache. So the library path starts with a directory of ours
// holding a libva.so.2 that is no library (an empty file): glibc's dlopen
// stops at the first file of that name and fails ("file too short"), on
// every host. The card's lists with and without libva are made from the
// key profile (neo_synthesis.hpp), not from the build host.
//
// Location: aot/toolchains.hpp intel_root(), the one owner of where the root
// is (PREWARM_INTEL_ROOT, else /var/cache/prewarm/intel-sid; "none": no
// root); usable when ROOT/.complete exists (written last by the setup, "package version"
// lines) and the loader and NEO's ICD are there.
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"
#include "process/environment.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace prewarm::virtual_device {

class IntelRoot
{
public:
  // Errc::failed E_INTEL_ROOT naming what is missing, with the command that
  // makes the root.
  static Result<IntelRoot> locate();
  static Result<IntelRoot> at(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return m_dir; }
  std::filesystem::path loader() const;
  std::filesystem::path library_dir() const; // ROOT/usr/lib/x86_64-linux-gnu
  std::string library_path() const;          // for --library-path: the pins (above), then the root's
  std::filesystem::path opencl_icd() const;  // NEO's libigdrcl.so
  std::filesystem::path level_zero_driver() const; // libze_intel_gpu.so.1
  std::filesystem::path igc_library() const; // libigc.so.2
  // The version .complete lists for a package ("26.27.39122.14-1"); empty
  // when not listed.
  std::string package_version(std::string_view package) const;
  // The driver release as OpenCL and ocloc spell it ("26.27.039122", from
  // intel-opencl-icd "26.27.39122.14-1"): the identity every slice made
  // with this root requires (jobs/slice_identity.hpp intel_driver_requirement).
  // Errc::failed E_INTEL_ROOT when .complete lists no such version.
  Result<std::string> driver_release() const;

  // argv that runs `program` (a host path) on the root's loader and libraries:
  // with the pins (a virtual device, whose record must not depend on the
  // build host), or as a card host's application runs (`intel-profile`
  // measures what that host's NEO lists).
  enum class HostLibraries { pinned, as_host };
  std::vector<std::string> command(const std::filesystem::path& program, std::vector<std::string> arguments,
                                   HostLibraries libraries = HostLibraries::pinned) const;

  // Writes DIR/neo.icd naming the root's NEO ICD (see the file comment);
  // returns the variables that make the ICD loader use it alone.
  Result<process::Environment> opencl_environment(const std::filesystem::path& vendors_dir) const;

  // The directory of libraries the root's programs must not find (above).
  const std::filesystem::path& pinned_dir() const { return m_pins->path(); }

private:
  IntelRoot(std::filesystem::path dir, std::string packages, std::shared_ptr<const TempDir> pins)
    : m_dir(std::move(dir)), m_packages(std::move(packages)), m_pins(std::move(pins))
  {
  }
  std::filesystem::path m_dir;
  std::string m_packages; // .complete
  std::shared_ptr<const TempDir> m_pins; // removed with the last copy
};

} // namespace prewarm::virtual_device
