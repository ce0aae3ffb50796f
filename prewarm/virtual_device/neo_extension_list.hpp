// SPDX-License-Identifier: Apache-2.0
// The `-cl-ext=` list NEO 26.27 puts into an OpenCL program's internal
// options, CONSTRUCTED the way NEO constructs it, from a device's extension
// list (CL_DEVICE_EXTENSIONS order) and the program's options; never an edit
// of a recorded list (where a name would go relative to its neighbours
// depends on the language version: see below).
//
// NEO's steps (compute-runtime 26.27.39122.14):
//   1. convertEnabledExtensionsToCompilerInternalOptions
//      (shared/source/compiler_interface/oclc_extensions.cpp:142-162):
//      " -cl-ext=-all," then "+NAME," per device extension in the device's
//      order, then "+FEATURE," per OpenCL C feature, the last ',' made ' '.
//      The device's features are listed only for OpenCL C 3.0 and later
//      (opencl/source/program/build.cpp:85-86, requiresOpenClCFeatures).
//   2. appendAdditionalExtensions (shared/source/helpers/compiler_options_parser.cpp:116-125):
//      for "-cl-std=CL2.x" ",+cl_khr_3d_image_writes" AFTER everything (so
//      after cl_khr_pci_bus_info on a card); with -cl-fp64-gen-emu in the
//      internal options ",+__opencl_c_fp64,+cl_khr_fp64" after that.
//   3. removeNotSupportedExtensions (same file, 127-139): below OpenCL C 1.2
//      the first "+cl_khr_gl_msaa_sharing" is erased, its comma kept: an
//      empty slot (",,") stays in the list.
//   4. concatenateAppend to the internal options (compiler_options.h:101-106):
//      a space first unless the options end with one.
// The language version is NEO's getMajorMinorVersion (compiler_options_parser.cpp:25-36):
// the first "-cl-std=CL" in the API options, read as "MAJOR.MINOR" by a
// stream; "-cl-std=CLC++..." (C++ for OpenCL) and no -cl-std read as 0.0.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::virtual_device::neo {

struct ClStd
{
  unsigned major = 0;
  unsigned minor = 0;
};
// NEO's reading of "-cl-std=CL" in the program's API options.
ClStd opencl_c_version(std::string_view options);

// Step 1-3: NEO's " -cl-ext=-all,...,LAST " for a program built with
// `options` and the internal options NEO had before the list (`internal`:
// only -cl-fp64-gen-emu matters), on a device listing `extensions` (its
// CL_DEVICE_EXTENSIONS names, in order) and OpenCL C `features`.
std::string compiler_extensions(const std::vector<std::string>& extensions, const std::vector<std::string>& features,
                                std::string_view options, std::string_view internal);

// Recorded internal options split around the list NEO appended:
// before + list + after == the recorded text, `list` as compiler_extensions
// returns it (leading and trailing space included). nullopt: no list (NEO
// appends one to every OpenCL build it caches; Level Zero's differs).
struct ExtensionListPlace
{
  std::string before;
  std::string list;
  std::string after;
};
std::optional<ExtensionListPlace> find_extension_list(std::string_view internal_options);

// The OpenCL C features in a recorded list ("__opencl_c_..." names), without
// the ones step 2 adds for -cl-fp64-gen-emu: the device's features, for a
// program whose options ask for OpenCL C 3.0 (empty otherwise).
std::vector<std::string> recorded_features(const ExtensionListPlace& place, std::string_view options);

// Space-separated names (CL_DEVICE_EXTENSIONS), in order.
std::vector<std::string> split_names(std::string_view text);

} // namespace prewarm::virtual_device::neo
