// SPDX-License-Identifier: Apache-2.0
// `prewarm build --show-config`: every setting the build would use and where
// it came from, like `ccache --show-config`. Precedence, highest first:
// flag > environment variable > manifest file > default. One line each:
//   (--serial) serial = 7
//   (SOURCE_DATE_EPOCH) issued-at = 2026-11-20T00:00:00Z
#pragma once

#include "bundle_build/build_command.hpp"
#include "bundle_build/build_runner.hpp"
#include "bundle_build/bundle_header.hpp"

#include <string>
#include <vector>

namespace prewarm::bundle_build {

struct Setting
{
  std::string name;
  std::string value;
  std::string origin; // "--serial", "environment PREWARM_OCLOC", "m.yaml", "default"
};

// Every setting of this build and where it came from.
std::vector<Setting> resolved_settings(const BuildRequest& request, const BuildOptions& options,
                                       const BuildInputs& inputs, const BundleHeader& header);

// "(origin) name = value" lines, names aligned.
std::string format_settings(const std::vector<Setting>& settings);

} // namespace prewarm::bundle_build
