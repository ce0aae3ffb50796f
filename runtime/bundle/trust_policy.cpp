// SPDX-License-Identifier: Apache-2.0
#include "bundle/trust_policy.hpp"

#include "base/files.hpp"
#include "base/time_format.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/runtime_variable.hpp"
#include "bundle/yaml_duplicate_keys.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <map>

namespace prewarm::bundle {

namespace {

// yaml-cpp throws; everything here runs inside one try block in
// parse_trust_policy() and turns a throw into Errc::usage.
struct PolicyReader
{
  std::string origin;
  std::filesystem::path base_dir;

  std::unexpected<Error> error(const YAML::Node& node, std::string_view field, std::string_view why) const
  {
    const auto mark = node.Mark();
    if (mark.is_null()) {
      return fail(Errc::usage, fmt::format("{}: {}: {}", origin, field, why));
    }
    return fail(Errc::usage, fmt::format("{}:{}:{}: {}: {}", origin, mark.line + 1, mark.column + 1, field, why));
  }

  Status only_keys(const YAML::Node& map, std::string_view where, std::initializer_list<std::string_view> known) const
  {
    if (!map.IsMap()) {
      return error(map, where, "must be a mapping");
    }
    for (const auto& item : map) {
      const auto key = item.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (const auto k : known) {
          list += list.empty() ? "" : ", ";
          list += k;
        }
        return error(item.first, fmt::format("{}.{}", where, key), fmt::format("unknown key (known: {})", list));
      }
    }
    return {};
  }

  Result<std::string> scalar(const YAML::Node& node, std::string_view field) const
  {
    if (!node.IsScalar()) {
      return error(node, field, "must be a single value");
    }
    return node.Scalar();
  }

  Result<std::uint64_t> unsigned_value(const YAML::Node& node, std::string_view field) const
  {
    PW_ASSIGN(const auto text, scalar(node, field));
    std::uint64_t value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc{} || ptr != end) {
      return error(node, field, fmt::format("'{}' is not an unsigned integer", text));
    }
    return value;
  }

  Result<std::string> key_id(const YAML::Node& node, std::string_view field) const
  {
    PW_ASSIGN(const auto text, scalar(node, field));
    const bool hex = text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
                       return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                     });
    if (!hex) {
      return error(node, field, fmt::format("'{}' is not 64 lowercase hex digits", text));
    }
    return text;
  }

  Result<SysSeconds> time_value(const YAML::Node& node, std::string_view field) const
  {
    PW_ASSIGN(const auto text, scalar(node, field));
    auto parsed = parse_rfc3339(text);
    if (!parsed) {
      return error(node, field, parsed.error().message());
    }
    return *parsed;
  }

  Result<TrustedKey> trusted_key(const YAML::Node& node, std::string_view field) const
  {
    PW_TRY(only_keys(node, field, {"pem", "file", "key_id", "not_before", "not_after"}));
    const bool has_pem = static_cast<bool>(node["pem"]);
    const bool has_file = static_cast<bool>(node["file"]);
    if (has_pem == has_file) {
      return error(node, field, "needs exactly one of pem: or file:");
    }
    std::optional<PublicKey> key;
    if (has_pem) {
      PW_ASSIGN(const auto pem, scalar(node["pem"], fmt::format("{}.pem", field)));
      auto loaded = PublicKey::from_pem(pem, fmt::format("{} {}.pem", origin, field));
      if (!loaded) {
        return error(node["pem"], fmt::format("{}.pem", field), loaded.error().message());
      }
      key = std::move(*loaded);
    } else {
      PW_ASSIGN(const auto file, scalar(node["file"], fmt::format("{}.file", field)));
      std::filesystem::path path = file;
      if (path.is_relative()) {
        path = base_dir / path;
      }
      auto loaded = PublicKey::load(path);
      if (!loaded) {
        return error(node["file"], fmt::format("{}.file", field), loaded.error().message());
      }
      key = std::move(*loaded);
    }
    TrustedKey out{std::move(*key), std::nullopt, std::nullopt};
    if (node["key_id"]) {
      PW_ASSIGN(const auto id, key_id(node["key_id"], fmt::format("{}.key_id", field)));
      if (id != out.key.key_id()) {
        return error(node["key_id"], fmt::format("{}.key_id", field),
                     fmt::format("says {} but the key's id is {}", id, out.key.key_id()));
      }
    }
    if (node["not_before"]) {
      PW_ASSIGN(out.not_before, time_value(node["not_before"], fmt::format("{}.not_before", field)));
    }
    if (node["not_after"]) {
      PW_ASSIGN(out.not_after, time_value(node["not_after"], fmt::format("{}.not_after", field)));
    }
    return out;
  }

  Result<ChannelRule> channel_rule(const YAML::Node& node, std::string_view field) const
  {
    ChannelRule rule;
    if (node.IsNull()) {
      return rule; // "prod/llm:" alone: the channel is allowed, no rule
    }
    PW_TRY(only_keys(node, field, {"min_serial", "expect_manifest_sha256"}));
    if (node["min_serial"]) {
      PW_ASSIGN(rule.min_serial, unsigned_value(node["min_serial"], fmt::format("{}.min_serial", field)));
    }
    if (node["expect_manifest_sha256"]) {
      PW_ASSIGN(rule.expect_manifest_sha256,
                key_id(node["expect_manifest_sha256"], fmt::format("{}.expect_manifest_sha256", field)));
    }
    return rule;
  }

  Status limits(const YAML::Node& node, ExtractLimits& out) const
  {
    PW_TRY(only_keys(node, "limits",
                     {"max_payload_bytes", "max_uncompressed_bytes", "max_entries", "max_file_bytes",
                      "max_path_length", "max_depth", "max_expansion_ratio"}));
    const std::pair<const char*, std::uint64_t*> fields[] = {
      {"max_payload_bytes", &out.max_payload_bytes},   {"max_uncompressed_bytes", &out.max_uncompressed_bytes},
      {"max_entries", &out.max_entries},               {"max_file_bytes", &out.max_file_bytes},
      {"max_path_length", &out.max_path_length},       {"max_depth", &out.max_depth},
      {"max_expansion_ratio", &out.max_expansion_ratio}};
    for (const auto& [name, target] : fields) {
      if (node[name]) {
        PW_ASSIGN(*target, unsigned_value(node[name], fmt::format("limits.{}", name)));
        if (*target == 0) {
          return error(node[name], fmt::format("limits.{}", name), "must be at least 1");
        }
      }
    }
    return {};
  }

  Result<TrustPolicy> read(const YAML::Node& root) const
  {
    PW_TRY(only_keys(root, "policy",
                     {"version", "keys", "revoked", "threshold", "expiry", "max_clock_skew", "channels", "limits",
                      "install"}));
    if (!root["version"]) {
      return error(root, "version", "missing (this prewarm-runtime reads version: 1)");
    }
    PW_ASSIGN(const auto version, unsigned_value(root["version"], "version"));
    if (version != 1) {
      return error(root["version"], "version", fmt::format("{} is not supported (this prewarm-runtime reads 1)", version));
    }
    TrustPolicy policy;
    policy.origin = origin;
    const auto keys = root["keys"];
    if (!keys || !keys.IsSequence() || keys.size() == 0) {
      return error(keys ? keys : root, "keys", "must be a non-empty list of trusted keys");
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      PW_ASSIGN(auto key, trusted_key(keys[i], fmt::format("keys[{}]", i)));
      policy.trust.keys.push_back(std::move(key));
    }
    if (const auto revoked = root["revoked"]) {
      if (!revoked.IsSequence()) {
        return error(revoked, "revoked", "must be a list of key ids");
      }
      for (std::size_t i = 0; i < revoked.size(); ++i) {
        PW_ASSIGN(auto id, key_id(revoked[i], fmt::format("revoked[{}]", i)));
        policy.trust.revoked_key_ids.push_back(std::move(id));
      }
    }
    if (root["threshold"]) {
      PW_ASSIGN(const auto threshold, unsigned_value(root["threshold"], "threshold"));
      if (threshold > 1024) {
        return error(root["threshold"], "threshold", "is larger than any key list");
      }
      policy.trust.threshold = static_cast<unsigned>(threshold);
    }
    if (root["expiry"]) {
      PW_ASSIGN(const auto expiry, scalar(root["expiry"], "expiry"));
      if (expiry == "enforce") {
        policy.expiry = PolicyExpiry::enforce;
      } else if (expiry == "warn") {
        policy.expiry = PolicyExpiry::warn;
      } else {
        return error(root["expiry"], "expiry", fmt::format("'{}' is neither enforce nor warn", expiry));
      }
    }
    if (root["max_clock_skew"]) {
      PW_ASSIGN(const auto text, scalar(root["max_clock_skew"], "max_clock_skew"));
      auto skew = parse_duration(text);
      if (!skew) {
        return error(root["max_clock_skew"], "max_clock_skew", skew.error().message());
      }
      policy.max_clock_skew = *skew;
    }
    if (const auto channels = root["channels"]) {
      if (!channels.IsMap() && !channels.IsNull()) {
        return error(channels, "channels", "must be a mapping of channel name to rule");
      }
      for (const auto& item : channels) {
        const auto name = item.first.as<std::string>();
        PW_ASSIGN(auto rule, channel_rule(item.second, fmt::format("channels.{}", name)));
        policy.manifest.channels.emplace(name, std::move(rule));
      }
    }
    if (const auto limits_node = root["limits"]) {
      PW_TRY(limits(limits_node, policy.manifest.limits));
    }
    if (const auto install = root["install"]) {
      PW_TRY(only_keys(install, "install", {"root", "kinds", "owner", "environment"}));
      if (const auto names = install["environment"]) {
        if (!names.IsSequence()) {
          return error(names, "install.environment", "must be a list of variable names");
        }
        for (std::size_t i = 0; i < names.size(); ++i) {
          const auto field = fmt::format("install.environment[{}]", i);
          PW_ASSIGN(const auto name, scalar(names[i], field));
          // The deny list is a floor no policy lowers (runtime_variable.hpp).
          if (auto allowed = check_exported_variable(name); !allowed) {
            return error(names[i], field, allowed.error().message() + " (no policy can allow it)");
          }
          policy.manifest.allowed_environment.insert(name);
        }
      }
      if (install["owner"]) {
        PW_ASSIGN(const auto text, scalar(install["owner"], "install.owner"));
        auto owner = parse_install_owner(text);
        if (!owner) {
          return error(install["owner"], "install.owner", owner.error().message());
        }
        policy.manifest.install_owner = *owner;
      }
      if (install["root"]) {
        PW_ASSIGN(const auto dir, scalar(install["root"], "install.root"));
        if (dir.empty() || dir.front() != '/') {
          return error(install["root"], "install.root", fmt::format("'{}' is not an absolute path", dir));
        }
        policy.install_root = dir;
      }
      if (const auto kinds = install["kinds"]) {
        if (!kinds.IsSequence()) {
          return error(kinds, "install.kinds", "must be a list of cache kinds");
        }
        std::set<std::string> allowed;
        for (std::size_t i = 0; i < kinds.size(); ++i) {
          PW_ASSIGN(const auto name, scalar(kinds[i], fmt::format("install.kinds[{}]", i)));
          if (auto kind = check_allowed_kind_name(name); !kind) {
            return error(kinds[i], fmt::format("install.kinds[{}]", i), kind.error().message());
          }
          allowed.insert(name);
        }
        policy.manifest.allowed_kinds = std::move(allowed);
      }
    }
    return policy;
  }
};

bool
ends_with(const std::string& text, std::string_view suffix)
{
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

Result<TrustPolicy>
parse_trust_policy(std::string_view yaml_text, const std::filesystem::path& base_dir, std::string_view origin)
{
  if (yaml_text.size() > k_max_policy_bytes) {
    return fail(Errc::usage, fmt::format("{}: {} bytes, more than the {} a policy may have", origin, yaml_text.size(),
                                         k_max_policy_bytes));
  }
  // A NUL would end yaml-cpp's view of the text early: what is read must be
  // what the file says.
  if (yaml_text.find('\0') != std::string_view::npos) {
    return fail(Errc::usage, fmt::format("{}: contains a NUL byte", origin));
  }
  PolicyReader reader{std::string(origin), base_dir};
  Result<TrustPolicy> policy = fail(Errc::internal, "unreachable");
  try {
    const auto root = YAML::Load(std::string(yaml_text));
    if (!root.IsMap()) {
      return fail(Errc::usage, fmt::format("{}: must be a YAML mapping (version:, keys:, ...)", origin));
    }
    if (auto unique = refuse_duplicate_keys(root, origin); !unique) {
      return fail(std::move(unique).error());
    }
    policy = reader.read(root);
  } catch (const YAML::Exception& e) {
    return fail(Errc::usage, fmt::format("{}:{}:{}: {}", origin, e.mark.line + 1, e.mark.column + 1, e.msg));
  } catch (const std::exception& e) {
    return fail(Errc::usage, fmt::format("{}: {}", origin, e.what()));
  }
  if (!policy) {
    return policy;
  }
  auto valid = validate_trust_store(policy->trust);
  if (!valid) {
    return fail(valid.error().wrap(origin));
  }
  return policy;
}

Result<TrustPolicy>
load_trust_policy(const std::filesystem::path& policy_file)
{
  auto text = read_file(policy_file.string(), k_max_policy_bytes);
  if (!text) {
    return fail(Errc::usage, fmt::format("trust policy {}: {}", policy_file.string(), text.error().message()));
  }
  auto base = policy_file.parent_path();
  if (base.empty()) {
    base = ".";
  }
  return parse_trust_policy(*text, base, policy_file.string());
}

Result<TrustPolicy>
load_trust_file(const std::filesystem::path& file)
{
  const auto name = file.filename().string();
  if (ends_with(name, ".yaml") || ends_with(name, ".yml")) {
    return load_trust_policy(file);
  }
  PW_ASSIGN(auto trust, load_trust_from_public_key(file));
  TrustPolicy policy;
  policy.trust = std::move(trust);
  policy.origin = file;
  return policy;
}

Status
check_manifest_policy(const ManifestPolicy& policy, std::string_view manifest_sha256, const BundleManifest& manifest)
{
  if (!policy.channels.empty()) {
    const auto rule = policy.channels.find(manifest.channel);
    if (rule == policy.channels.end()) {
      std::string expected;
      for (const auto& [name, _] : policy.channels) {
        expected += expected.empty() ? "" : ", ";
        expected += name;
      }
      return fail(Errc::verify,
                  fmt::format("the bundle is for channel '{}'; the trust policy accepts only: {}", manifest.channel,
                              expected),
                  "E_CHANNEL");
    }
    // The pin comes first: it is the strongest rule and explains the outcome
    // best ("not the bundle this image was built with").
    if (rule->second.expect_manifest_sha256 && *rule->second.expect_manifest_sha256 != manifest_sha256) {
      return fail(Errc::verify,
                  fmt::format("channel '{}' is pinned to manifest sha256 {}; this bundle's manifest is {} (serial {})",
                              manifest.channel, *rule->second.expect_manifest_sha256, manifest_sha256, manifest.serial),
                  "E_PIN");
    }
    if (rule->second.min_serial && manifest.serial < *rule->second.min_serial) {
      return fail(Errc::verify,
                  fmt::format("channel '{}': serial {} is below the trust policy's min_serial {} (rollback)",
                              manifest.channel, manifest.serial, *rule->second.min_serial),
                  "E_ROLLBACK");
    }
  }
  const auto& limits = policy.limits;
  for (const auto& slice : manifest.slices) {
    const auto over = [&](std::string_view what, std::uint64_t actual, std::uint64_t limit) -> Status {
      if (actual > limit) {
        return fail(Errc::verify,
                    fmt::format("slice {}: declares {} {}, more than the trust policy's limit {}", slice.id, what,
                                actual, limit),
                    "E_LIMIT");
      }
      return {};
    };
    PW_TRY(over("payload bytes", slice.payload_size, limits.max_payload_bytes));
    PW_TRY(over("uncompressed bytes", slice.uncompressed_size, limits.max_uncompressed_bytes));
    PW_TRY(over("entries", slice.entry_count, limits.max_entries));
    for (const auto& file : slice.files) {
      PW_TRY(over(fmt::format("file size ({})", file.path), file.size, limits.max_file_bytes));
      PW_TRY(over(fmt::format("path length ({})", file.path), file.path.size(), limits.max_path_length));
      const auto depth = static_cast<std::uint64_t>(std::count(file.path.begin(), file.path.end(), '/'));
      PW_TRY(over(fmt::format("path depth ({})", file.path), depth, limits.max_depth));
      if (!kind_allowed(policy, file.path)) {
        std::string allowed;
        for (const auto& k : *policy.allowed_kinds) {
          allowed += allowed.empty() ? "" : ", ";
          allowed += k;
        }
        return fail(Errc::verify,
                    fmt::format("slice {}: file {} is of cache kind '{}'; the trust policy allows only: {}", slice.id,
                                file.path, kind_of(file.path), allowed.empty() ? "(none)" : allowed),
                    "E_POLICY_KIND");
      }
    }
    for (const auto& dir : slice.directories) {
      PW_TRY(over(fmt::format("path length ({})", dir), dir.size(), limits.max_path_length));
      if (!kind_allowed(policy, dir)) {
        return fail(Errc::verify,
                    fmt::format("slice {}: directory {} is of cache kind '{}', which the trust policy does not allow",
                                slice.id, dir, kind_of(dir)),
                    "E_POLICY_KIND");
      }
    }
  }
  return {};
}

Status
check_allowed_kind_name(std::string_view name)
{
  if (name == k_custom_kind) {
    return {};
  }
  if (name.starts_with(k_custom_kind) && name.size() > k_custom_kind.size() + 1 && name[k_custom_kind.size()] == '/') {
    if (auto checked = check_custom_cache_name(name.substr(k_custom_kind.size() + 1)); !checked) {
      return fail(Errc::usage, checked.error().message());
    }
    return {};
  }
  if (auto kind = parse_cache_kind(name); !kind) {
    return fail(Errc::usage, fmt::format("{}, \"{}\" (every custom cache) or \"{}/NAME\" (one)",
                                         kind.error().message(), k_custom_kind, k_custom_kind));
  }
  return {};
}

bool
kind_allowed(const ManifestPolicy& policy, std::string_view entry_path)
{
  if (!policy.allowed_kinds) {
    return true;
  }
  const auto& allowed = *policy.allowed_kinds;
  const auto kind = kind_of(entry_path);
  if (kind != k_custom_kind) {
    return allowed.contains(std::string(kind));
  }
  if (allowed.contains(std::string(k_custom_kind))) {
    return true;
  }
  const auto name = custom_cache_of(entry_path);
  if (name.empty()) {
    // The "custom" directory itself: allowed when any custom cache is.
    return std::any_of(allowed.begin(), allowed.end(),
                       [](const std::string& k) { return k.starts_with(std::string(k_custom_kind) + "/"); });
  }
  return allowed.contains(fmt::format("{}/{}", k_custom_kind, name));
}

Result<InstallOwner>
parse_install_owner(std::string_view text)
{
  const auto colon = text.find(':');
  const auto number = [](std::string_view digits) -> std::optional<std::uint32_t> {
    if (digits.empty() || digits.size() > 10 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    std::uint64_t v = 0;
    for (const char c : digits) {
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    // (uid_t)-1 means "unchanged" to chown(2): never a real owner.
    return v < 0xffffffffu ? std::optional(static_cast<std::uint32_t>(v)) : std::nullopt;
  };
  const auto uid = colon == std::string_view::npos ? std::nullopt : number(text.substr(0, colon));
  const auto gid = colon == std::string_view::npos ? std::nullopt : number(text.substr(colon + 1));
  if (!uid || !gid) {
    return fail(Errc::usage, fmt::format("'{}' is not UID:GID (two decimal numbers, e.g. 1000:1000)", text));
  }
  return InstallOwner{*uid, *gid};
}

} // namespace prewarm::bundle
