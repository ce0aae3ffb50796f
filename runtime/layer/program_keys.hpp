// SPDX-License-Identifier: Apache-2.0
// The keys of an application's programs, one per device: the payload (source
// text or IL) and its specialisation constants, the options, the device and
// driver (device_identity.hpp), the stage, and for OpenCL C every file the
// preprocessor could read (store/program_includes.hpp). A source whose
// includes cannot be known completely gets no key at all: the program is
// passed through (pass_through_reason).
#pragma once

#include "layer/cl_layer_api.hpp"
#include "layer/program_table.hpp"
#include "store/program_includes.hpp"
#include "store/program_record.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prewarm::layer {

using KeyFields = std::vector<std::pair<std::string, std::string>>;

std::vector<store::ProgramKey> build_keys(const TrackedProgram& tracked, const std::vector<cl_device_id>& devices,
                                          std::string_view stage, std::string_view options, const KeyFields& more = {});

// The include part of a source program's key, resolved now (relative
// directories against the working directory of this moment). IL has none.
store::IncludeDigest source_includes(const TrackedProgram& tracked, std::string_view options,
                                     const std::vector<store::EmbeddedHeader>& embedded = {});

// Whether the files a recorded program's key names still hold what they
// held at its build (a capture after the kernels ran rebuilds the program
// on PoCL and must not store a binary of other headers under the old key).
bool includes_unchanged(const TrackedProgram& tracked);

} // namespace prewarm::layer
