// SPDX-License-Identifier: Apache-2.0
#include "bundle/trust.hpp"

#include <fmt/format.h>

#include <set>

namespace prewarm::bundle {

Result<TrustStore>
load_trust_from_public_key(const std::filesystem::path& pub_file)
{
  PW_ASSIGN(auto key, PublicKey::load(pub_file));
  TrustStore trust;
  trust.keys.push_back(TrustedKey{std::move(key), std::nullopt, std::nullopt});
  trust.threshold = 1;
  return trust;
}

Status
validate_trust_store(const TrustStore& trust)
{
  if (trust.threshold < 1) {
    return fail(Errc::usage, "trust store: threshold must be at least 1");
  }
  std::set<std::string> ids;
  for (const auto& key : trust.keys) {
    if (!ids.insert(key.key.key_id()).second) {
      return fail(Errc::usage, fmt::format("trust store: key {} is listed twice", key.key.key_id()));
    }
    if (key.not_before && key.not_after && *key.not_after < *key.not_before) {
      return fail(Errc::usage, fmt::format("trust store: key {}: not_after is before not_before", key.key.key_id()));
    }
  }
  if (trust.threshold > trust.keys.size()) {
    return fail(Errc::usage, fmt::format("trust store: threshold {} but only {} keys: nothing could ever verify",
                                         trust.threshold, trust.keys.size()));
  }
  return {};
}

} // namespace prewarm::bundle
