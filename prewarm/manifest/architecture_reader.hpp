// SPDX-License-Identifier: Apache-2.0
// Reads one ARCHITECTURE mapping (see presets.hpp): shared by the presets file
// and a manifest's inline `architecture:`. Internal to prewarm_manifest.
#pragma once

#include "model/architecture.hpp"
#include "manifest/yaml_reader.hpp"

namespace prewarm::manifest {

Result<model::ModelArchitecture> read_architecture(const yaml::Source& source,
                                                    const YAML::Node& node,
                                                    const std::string& path,
                                                    std::string name);

} // namespace prewarm::manifest
