// SPDX-License-Identifier: Apache-2.0
// yaml-cpp keeps both pairs of a duplicated key and `node[key]` returns the
// first, so `revoked: []` followed by `revoked: [ID]` in a trust policy would
// silently keep the weaker rule: every mapping of the document is checked,
// as the builder's manifest reader does (prewarm/manifest/yaml_reader.cpp).
// The walk is bounded (depth and nodes once aliases are expanded); past the
// bounds a document is refused, never walked. Errc::usage naming
// ORIGIN:LINE:COLUMN and the field. yaml-cpp may throw: callers run this
// inside their try block.
#pragma once

#include "base/error.hpp"

#include <yaml-cpp/yaml.h>

#include <string_view>

namespace prewarm::bundle {

Status refuse_duplicate_keys(const YAML::Node& root, std::string_view origin);

} // namespace prewarm::bundle
