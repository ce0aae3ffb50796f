// SPDX-License-Identifier: Apache-2.0
#include "install/bundle_verification.hpp"

#include "base/digest.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/signature.hpp"
#include "bundle/slice_reader.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace prewarm::install {

Status
check_validity_period(const bundle::BundleManifest& manifest,
                      SysSeconds now,
                      const VerifyOptions& options,
                      std::vector<std::string>& warnings)
{
  const auto report = [&](std::string message, std::string code) -> Status {
    if (options.expiry == ExpiryPolicy::warn) {
      warnings.push_back(fmt::format("{}: {} (accepted: expiry policy is warn)", code, message));
      return {};
    }
    return fail(Errc::verify, std::move(message), std::move(code));
  };
  if (manifest.issued_at > now + options.clock_skew) {
    PW_TRY(report(fmt::format("the bundle was issued at {}, after this host's time {} plus the allowed clock skew "
                              "of {} s (is the clock wrong?)",
                              format_rfc3339(manifest.issued_at), format_rfc3339(now), options.clock_skew.count()),
                  "E_CLOCK"));
  }
  if (manifest.expires < now - options.clock_skew) {
    PW_TRY(report(fmt::format("the bundle expired at {}; now is {} (allowed clock skew {} s)",
                              format_rfc3339(manifest.expires), format_rfc3339(now), options.clock_skew.count()),
                  "E_EXPIRED"));
  }
  return {};
}

Result<VerifiedBundle>
verify_manifest(const std::filesystem::path& dir, const bundle::TrustStore& trust, SysSeconds now,
                const VerifyOptions& options)
{
  PW_ASSIGN(auto files, bundle::load_bundle_files(dir));
  VerifiedBundle verified;
  verified.dir = dir;
  // The signature covers exactly these bytes; nothing parses them before.
  PW_ASSIGN_CTX(verified.signer_key_ids, fmt::format("signature of {}", (dir / bundle::k_manifest_file).string()),
                bundle::verified_signers(files.manifest_bytes, files.envelope_bytes, trust, now));
  verified.manifest_bytes = std::move(files.manifest_bytes);
  verified.manifest_sha256 = sha256_hex(verified.manifest_bytes);
  PW_ASSIGN_CTX(verified.manifest, (dir / bundle::k_manifest_file).string(), bundle::parse(verified.manifest_bytes));
  PW_TRY_CTX(fmt::format("trust policy on {}", (dir / bundle::k_manifest_file).string()),
             bundle::check_manifest_policy(options.policy, verified.manifest_sha256, verified.manifest));
  PW_TRY(check_validity_period(verified.manifest, now, options, verified.warnings));
  return verified;
}

Result<VerifiedBundle>
verify_bundle(const std::filesystem::path& dir, const bundle::TrustStore& trust, SysSeconds now,
              const VerifyOptions& options)
{
  PW_ASSIGN(auto verified, verify_manifest(dir, trust, now, options));
  for (const auto& slice : verified.manifest.slices) {
    const auto context = fmt::format("slice {}", slice.id);
    PW_ASSIGN_CTX(const auto fd, context, bundle::open_slice_payload(dir, slice.id));
    PW_TRY_CTX(context, bundle::verify_payload(fd.get(), slice));
  }
  verified.payloads_verified = true;
  return verified;
}

} // namespace prewarm::install
