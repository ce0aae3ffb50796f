// SPDX-License-Identifier: Apache-2.0
// The trust policy file: what a production image trusts, baked into the image
// next to prewarm-runtime and passed as `--trust POLICY.yaml` (a `.pub` file
// is still accepted: one key, threshold 1, no other rule).
// Design: docs/research/signing-archives.md §6.2.
//
// The policy is trusted input (it comes with the image), but it is still read
// strictly: an unknown key, a wrong type or an impossible value is a config
// error (Errc::usage, exit 2) naming the field, so a typo never silently
// weakens a rule ("min_serail: 9" must not mean "no minimum").
//
//   version: 1                                   required
//   keys:                                        >= 1; trust comes from these bytes
//     - pem: |                                   Ed25519 SubjectPublicKeyInfo PEM, or
//       file: keys/release.pub                   a .pub file (relative: to the policy's dir)
//       key_id: <64 hex>                         optional; must equal the key's id
//       not_before: 2026-01-01T00:00:00Z         optional validity window (inclusive)
//       not_after:  2027-01-01T00:00:00Z
//   revoked: [<64 hex key id>, ...]              signatures by these never count
//   threshold: 1                                 distinct valid keys needed (k of n)
//   expiry: enforce | warn                       default enforce
//   max_clock_skew: 300s                         for issued-at / expires
//   channels:                                    absent or empty: any channel
//     prod/llm:                                  a bundle for another channel: E_CHANNEL
//       min_serial: 7                            serial below: E_ROLLBACK
//       expect_manifest_sha256: <64 hex>         pin: any other manifest, newer or
//                                                older, is E_PIN (build-time pinning)
//   limits:                                      each optional; defaults: ExtractLimits
//     max_payload_bytes: 17179869184             compressed size of one slice
//     max_uncompressed_bytes: 68719476736        sum of file sizes of one slice
//     max_entries: 1000000                       files + dirs of one slice
//     max_file_bytes: 8589934592
//     max_path_length: 1024
//     max_depth: 32
//     max_expansion_ratio: 2000
//   install:
//     root: /var/cache/prewarm                   default for --root
//     kinds: [pocl, neo, custom/hashcat]         cache kinds a bundle may write;
//                                                absent: all (E_POLICY_KIND otherwise).
//                                                "custom" allows every custom cache
//                                                (custom_cache.hpp), "custom/NAME" one
//     owner: "1000:1000"                         UID:GID (numbers) of every installed
//                                                file and directory when the installer
//                                                runs as root; absent: the installer's
//                                                own. Archive owners never apply; as
//                                                non-root no chown is attempted.
//     environment: [TOOL_EXPECT]                 variables a bundle may have exported
//                                                beyond the allow list (runtime_variable.hpp:
//                                                vetted cache locations and switches); a
//                                                name of the deny list is a config error.
//                                                The installer records them with the
//                                                version, where env/exec read them.
//
// Per-kind install roots: the installer lays kinds out as ROOT/<kind>
// (install_layout.hpp) and the environment points each cache there; the
// policy restricts which kinds may be written under the one root instead of
// mapping each kind to its own root.
//
// What the policy decides about a manifest (check_manifest_policy) runs after
// the signature verified and the manifest parsed, before anything is
// extracted: pin, channel, minimum serial, declared sizes against the limits,
// kinds. All failures are Errc::verify (REJECT, exit 3) with a named code and
// the expected and actual values.
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/slice_reader.hpp"
#include "bundle/trust.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace prewarm::bundle {

inline constexpr std::uint64_t k_max_policy_bytes = 1 << 20;

enum class PolicyExpiry { enforce, warn };

struct ChannelRule
{
  std::optional<std::uint64_t> min_serial;
  std::optional<std::string> expect_manifest_sha256; // lowercase hex
};

struct InstallOwner
{
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

// An install.kinds entry: a built-in kind, "custom" or "custom/NAME";
// Errc::usage otherwise.
Status check_allowed_kind_name(std::string_view name);

// "UID:GID", decimal; Errc::usage otherwise.
Result<InstallOwner> parse_install_owner(std::string_view text);

// The part of the policy that judges a verified manifest (and how its files
// are installed).
struct ManifestPolicy
{
  std::optional<InstallOwner> install_owner;
  std::map<std::string, ChannelRule> channels; // empty: any channel, no rule
  ExtractLimits limits;
  std::optional<std::set<std::string>> allowed_kinds; // nullopt: every kind
  std::set<std::string, std::less<>> allowed_environment; // install.environment
};

struct TrustPolicy
{
  TrustStore trust;
  ManifestPolicy manifest;
  PolicyExpiry expiry = PolicyExpiry::enforce;
  std::chrono::seconds max_clock_skew{300};
  std::optional<std::filesystem::path> install_root;
  std::filesystem::path origin; // the file it came from, for messages
};

// Parses policy YAML text. `base_dir` resolves relative `file:` keys;
// `origin` names the source in messages. Errc::usage on any problem.
Result<TrustPolicy> parse_trust_policy(std::string_view yaml_text,
                                       const std::filesystem::path& base_dir,
                                       std::string_view origin = "trust policy");

// Reads a policy file (<= 1 MiB, final symlink not followed).
Result<TrustPolicy> load_trust_policy(const std::filesystem::path& policy_file);

// What `--trust FILE` means: a policy when FILE ends in .yaml/.yml, else a
// public key file (a TrustPolicy with that one key and default rules).
Result<TrustPolicy> load_trust_file(const std::filesystem::path& file);

// Whether install.kinds lets an entry path ("pocl/..", "custom/hashcat/..",
// "custom") be installed.
bool kind_allowed(const ManifestPolicy& policy, std::string_view entry_path);

// Judges a verified, parsed manifest (its digest is the sha256 of the signed
// bytes). Codes: E_PIN, E_CHANNEL, E_ROLLBACK (below min_serial), E_LIMIT
// (declared sizes/entries beyond the limits), E_POLICY_KIND.
Status check_manifest_policy(const ManifestPolicy& policy,
                             std::string_view manifest_sha256,
                             const BundleManifest& manifest);

} // namespace prewarm::bundle
