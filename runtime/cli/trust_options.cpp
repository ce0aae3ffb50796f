// SPDX-License-Identifier: Apache-2.0
#include "cli/trust_options.hpp"

#include "base/time_format.hpp"

namespace prewarm::runtime_cli {

void
add_trust_options(CLI::App& command, TrustOptions& options)
{
  command.add_option("--trust", options.trust_file, "public key (.pub) whose signature the bundle must carry")
    ->required();
  command.add_option("--expiry", options.expiry, "enforce: an expired bundle fails; warn: install it with a warning "
                                                 "(hosts whose clock is not trusted at boot)")
    ->check(CLI::IsMember({"enforce", "warn"}))
    ->capture_default_str();
  command.add_option("--clock-skew", options.clock_skew, "allowed clock difference for issued-at/expires (30s, 5m)")
    ->capture_default_str();
}


Result<bundle::TrustStore>
load_trust(const TrustOptions& options)
{
  PW_ASSIGN_CTX(auto trust, "--trust " + options.trust_file, bundle::load_trust_from_public_key(options.trust_file));
  return trust;
}

Result<install::VerifyOptions>
verify_options(const TrustOptions& options)
{
  install::VerifyOptions out;
  out.expiry = options.expiry == "warn" ? install::ExpiryPolicy::warn : install::ExpiryPolicy::enforce;
  PW_ASSIGN_CTX(out.clock_skew, "--clock-skew", parse_duration(options.clock_skew));
  return out;
}

} // namespace prewarm::runtime_cli
