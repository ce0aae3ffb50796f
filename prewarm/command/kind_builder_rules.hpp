// SPDX-License-Identifier: Apache-2.0
// The builder's rules of a cache kind, one row per kind (kind_builder_rules.cpp),
// beside the shipped rules of bundle/cache_kind.hpp: what a slice of the kind
// requires of the host it installs on, and which variables of the
// application's environment make its capture miss or stay empty. The table is
// indexed by CacheKind; a kind without a row fails the build.
#pragma once

#include "bundle/cache_kind.hpp"
#include "command/identity.hpp"

#include <string>
#include <vector>

namespace prewarm::command {

struct KindBuilderRules
{
  bundle::CacheKind kind;
  // Adds the requirements (and the warnings for facts the build host lacks)
  // of a slice of `identity.kind` to `identity`.
  void (*require)(KindIdentity& identity, const IdentityFacts& facts, FrameworkRequirements frameworks);
  // Adds one readable line per variable of `environment` that makes the
  // capture of `kind` miss, stay empty or be unusable. Null: none known.
  void (*traps)(const Environment& environment, bundle::CacheKind kind, std::vector<std::string>& traps);
};

const KindBuilderRules& builder_rules_of(bundle::CacheKind kind);

} // namespace prewarm::command
