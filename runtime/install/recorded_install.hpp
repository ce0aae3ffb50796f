// SPDX-License-Identifier: Apache-2.0
// The recorded fast path of a repeated install (every container start on a
// kept volume): answered by the installed version's start record
// (start_record.hpp) when the bundle is the installed one, on the host it
// was installed on, under the same trust policy. No per-file work.
#pragma once

#include "bundle/trust.hpp"
#include "install/installer.hpp"

#include <filesystem>
#include <optional>

namespace prewarm::install {

// The signature checked over the bundle's manifest, whose digest is the
// installed one, so the parse, the policy's checks and the selection of that
// install hold still under the same policy (its digest recorded); the
// validity period and the host's fingerprint checked again. nullopt: the
// full path decides (and reports whatever is wrong); -v says why.
std::optional<InstallReport> recorded_install(const std::filesystem::path& bundle_dir, const bundle::TrustStore& trust,
                                              const std::filesystem::path& root, const HostSource& host,
                                              const InstallOptions& options);

} // namespace prewarm::install
