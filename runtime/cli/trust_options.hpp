// SPDX-License-Identifier: Apache-2.0
// TrustOptions (runtime_commands.hpp) turned into what the install library takes.
#pragma once

#include "bundle/trust.hpp"
#include "bundle/trust_policy.hpp"
#include "cli/runtime_commands.hpp"
#include "install/bundle_verification.hpp"

namespace prewarm::runtime_cli {

// --trust FILE as a policy (a .pub file is a one-key policy).
Result<bundle::TrustPolicy> load_policy(const TrustOptions& options);
Result<bundle::TrustStore> load_trust(const TrustOptions& options);
// --expiry / --clock-skew over the policy's expiry, max_clock_skew and rules.
Result<install::VerifyOptions> verify_options(const TrustOptions& options, const bundle::TrustPolicy& policy);
Result<install::VerifyOptions> verify_options(const TrustOptions& options);

} // namespace prewarm::runtime_cli
