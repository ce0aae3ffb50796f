// SPDX-License-Identifier: Apache-2.0
#include "bundle/yaml_duplicate_keys.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

namespace prewarm::bundle {

namespace {

// yaml-cpp keeps both pairs of a duplicated key and `node[key]` returns the
// first, so `revoked: []` followed by `revoked: [ID]` would silently keep the
// weaker rule. Every mapping in the document is checked, as the builder's
// manifest reader does (prewarm/manifest/yaml_reader.cpp).
//
// The walk is bounded: yaml-cpp registers an anchor before its node is read,
// so `&a [*a]` is a node that contains itself, and aliases of aliases make a
// 64 KiB text into billions of nodes. A policy is at most five levels deep and
// a few hundred nodes; anything past these bounds is refused, never walked.
constexpr int k_max_policy_depth = 16;
constexpr std::size_t k_max_policy_nodes = 100'000;

struct DuplicateKeyWalk
{
  std::string_view origin;
  std::size_t nodes = 0;

  Status check(const YAML::Node& node, const std::string& path, int depth)
  {
    if (depth > k_max_policy_depth) {
      return fail(Errc::usage,
                  fmt::format("{}:{}: {}: nested deeper than {} levels (a self-referencing alias, or not a "
                              "trust policy)",
                              origin, node.Mark().line + 1, path, k_max_policy_depth));
    }
    if (++nodes > k_max_policy_nodes) {
      return fail(Errc::usage, fmt::format("{}: more than {} nodes once aliases are expanded (not a trust policy)",
                                           origin, k_max_policy_nodes));
    }
    if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i) {
        PW_TRY(check(node[i], fmt::format("{}[{}]", path, i), depth + 1));
      }
      return {};
    }
    if (!node.IsMap()) {
      return {};
    }
    std::map<std::string, YAML::Mark, std::less<>> first_seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string name = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
      const auto field = path.empty() ? name : path + "." + name;
      const auto mark = it->first.Mark();
      if (const auto seen = first_seen.find(name); seen != first_seen.end()) {
        return fail(Errc::usage, fmt::format("{}:{}:{}: {}: duplicate key (first at line {}; a policy rule must be "
                                             "written once)",
                                             origin, mark.line + 1, mark.column + 1, field, seen->second.line + 1));
      }
      first_seen.emplace(name, mark);
      PW_TRY(check(it->second, field, depth + 1));
    }
    return {};
  }
};

} // namespace

Status
refuse_duplicate_keys(const YAML::Node& root, std::string_view origin)
{
  DuplicateKeyWalk walk{origin};
  return walk.check(root, "", 0);
}

} // namespace prewarm::bundle
