// SPDX-License-Identifier: Apache-2.0
#include "cli/trust_options.hpp"

#include "base/time_format.hpp"

namespace prewarm::runtime_cli {

void
add_trust_options(CLI::App& command, TrustOptions& options)
{
  command.add_option("--trust", options.trust_file,
                     "public key (.pub) whose signature the bundle must carry, or a trust policy (.yaml: keys, "
                     "threshold, revocations, channels, limits)")
    ->required();
  command.add_option("--expiry", options.expiry, "enforce: an expired bundle fails; warn: install it with a warning "
                                                 "(hosts whose clock is not trusted at boot); default: the policy's, "
                                                 "else enforce")
    ->check(CLI::IsMember({"enforce", "warn"}));
  command.add_option("--clock-skew", options.clock_skew,
                     "allowed clock difference for issued-at/expires (30s, 5m); default: the policy's, else 300s");
}

Result<bundle::TrustPolicy>
load_policy(const TrustOptions& options)
{
  PW_ASSIGN_CTX(auto policy, "--trust " + options.trust_file, bundle::load_trust_file(options.trust_file));
  return policy;
}

Result<bundle::TrustStore>
load_trust(const TrustOptions& options)
{
  PW_ASSIGN(auto policy, load_policy(options));
  return std::move(policy.trust);
}

Result<install::VerifyOptions>
verify_options(const TrustOptions& options, const bundle::TrustPolicy& policy)
{
  install::VerifyOptions out;
  out.expiry = policy.expiry == bundle::PolicyExpiry::warn ? install::ExpiryPolicy::warn : install::ExpiryPolicy::enforce;
  if (!options.expiry.empty()) {
    out.expiry = options.expiry == "warn" ? install::ExpiryPolicy::warn : install::ExpiryPolicy::enforce;
  }
  out.clock_skew = policy.max_clock_skew;
  if (!options.clock_skew.empty()) {
    PW_ASSIGN_CTX(out.clock_skew, "--clock-skew", parse_duration(options.clock_skew));
  }
  out.policy = policy.manifest;
  return out;
}

Result<install::VerifyOptions>
verify_options(const TrustOptions& options)
{
  PW_ASSIGN(const auto policy, load_policy(options));
  return verify_options(options, policy);
}

} // namespace prewarm::runtime_cli
