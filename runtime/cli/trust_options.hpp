// SPDX-License-Identifier: Apache-2.0
// TrustOptions (runtime_commands.hpp) turned into what the install library takes.
#pragma once

#include "bundle/trust.hpp"
#include "cli/runtime_commands.hpp"
#include "install/bundle_verification.hpp"

namespace prewarm::runtime_cli {

Result<bundle::TrustStore> load_trust(const TrustOptions& options);
Result<install::VerifyOptions> verify_options(const TrustOptions& options);

} // namespace prewarm::runtime_cli
