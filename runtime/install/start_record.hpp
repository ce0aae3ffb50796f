// SPDX-License-Identifier: Apache-2.0
// The start record's writer (grammar: install_records.hpp; reader for exec:
// recorded_environment.hpp). An install works out once what every later
// start would otherwise work out again from the manifest: the environment
// env/exec export for an application that uses the caches in place (by
// application_environment(), so the two cannot differ), what a repeated
// install reports, and what it must check again (the validity period, the
// host's fingerprint with the frameworks the slices need).
//
// A record answers only for the trust policy it was made under: its digest
// covers every rule a manifest is judged by (channels, pins, limits, kinds,
// install.environment). An install under another policy takes the full path
// and records the new one.
#pragma once

#include "base/error.hpp"
#include "bundle/trust_policy.hpp"
#include "install/bundle_verification.hpp"
#include "install/install_records.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace prewarm::install {

// SHA-256 of the policy's manifest rules in one canonical text.
std::string policy_digest(const bundle::ManifestPolicy& policy);

// Whether VERSION/.start is the record of this manifest under this policy,
// written by this runtime.
bool start_recorded(const std::filesystem::path& version_dir, const std::string& manifest_sha256,
                    const bundle::ManifestPolicy& policy);

// Writes the start record of the version the marker under ROOT names, which
// must hold `verified`. An error leaves no record (exec and a repeated
// install then take the full path); a value the grammar cannot carry leaves
// the environment to exec's full computation.
Status write_start_record(const std::filesystem::path& root, const VerifiedBundle& verified,
                          const bundle::ManifestPolicy& policy);

} // namespace prewarm::install
