// SPDX-License-Identifier: Apache-2.0
#include "pack/inspect.hpp"

#include "base/digest.hpp"
#include "base/json_schema.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/requirement.hpp"
#include "bundle/runtime_variable.hpp"
#include "bundle/signature.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace prewarm::pack {

namespace {

std::vector<KindSummary>
summarize_kinds(const bundle::Slice& slice)
{
  std::map<std::string, KindSummary, std::less<>> kinds;
  for (const auto& dir : slice.directories) {
    const auto kind = std::string(bundle::kind_of(dir));
    kinds.try_emplace(kind, KindSummary{kind, 0, 0});
  }
  for (const auto& file : slice.files) {
    const auto kind = std::string(bundle::kind_of(file.path));
    auto& summary = kinds.try_emplace(kind, KindSummary{kind, 0, 0}).first->second;
    ++summary.file_count;
    summary.total_bytes += file.size;
  }
  for (const auto& link : slice.links) {
    const auto kind = std::string(bundle::kind_of(link.path));
    ++kinds.try_emplace(kind, KindSummary{kind, 0, 0}).first->second.link_count;
  }
  std::vector<KindSummary> out;
  for (auto& [name, summary] : kinds) {
    out.push_back(std::move(summary));
  }
  return out;
}

std::string
human_bytes(std::uint64_t bytes)
{
  if (bytes < 1024) {
    return fmt::format("{} B", bytes);
  }
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024.0 && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, units[unit]);
}

} // namespace

Result<BundleDescription>
inspect_bundle(const std::filesystem::path& dir, const std::optional<bundle::TrustStore>& trust, SysSeconds now)
{
  PW_ASSIGN(const auto loaded, bundle::load_bundle_files(dir));
  BundleDescription description;
  description.dir = dir;
  description.manifest_sha256 = sha256_hex(loaded.manifest_bytes);
  if (trust) {
    // Verify before parse, as the runtime does.
    PW_ASSIGN(description.signer_key_ids, bundle::verified_signers(loaded.manifest_bytes, loaded.envelope_bytes, *trust, now));
    description.signature = SignatureCheck::verified;
  }
  if (auto envelope = bundle::parse_envelope(loaded.envelope_bytes)) {
    for (const auto& line : envelope->signatures) {
      description.envelope_key_ids.push_back(line.key_id);
    }
  }
  PW_ASSIGN(description.manifest, bundle::parse(loaded.manifest_bytes));
  for (const auto& slice : description.manifest.slices) {
    description.slice_kinds.push_back(summarize_kinds(slice));
  }
  return description;
}

namespace {

// The variables a slice asks env/exec to export that the runtime's allow
// list does not cover: a trust policy must name each in install.environment,
// or env/exec leave it unset (runtime_variable.hpp).
std::vector<std::string>
needs_install_environment(const bundle::Slice& slice)
{
  const std::set<std::string, std::less<>> no_policy;
  std::vector<std::string> names;
  for (const auto& c : slice.caches) {
    const auto allowed =
      c.flag ? bundle::check_allowed_variable(c.variable, c.flag->key, bundle::VariableRole::cache_flag, no_policy)
             : bundle::check_allowed_variable(c.variable, "", bundle::VariableRole::cache_location, no_policy);
    if (!allowed) {
      names.push_back(c.variable);
    }
  }
  for (const auto& e : slice.environment) {
    if (!bundle::check_allowed_variable(e.name, e.value, bundle::VariableRole::runtime_env, no_policy)) {
      names.push_back(e.name);
    }
  }
  return names;
}

} // namespace

std::string
format_text(const BundleDescription& d)
{
  const auto& m = d.manifest;
  std::string out;
  out += fmt::format("bundle     {}\n", d.dir.string());
  out += fmt::format("manifest   sha256:{}\n", d.manifest_sha256);
  if (d.signature == SignatureCheck::verified) {
    out += fmt::format("signature  verified ({} trusted key{}: {})\n", d.signer_key_ids.size(),
                       d.signer_key_ids.size() == 1 ? "" : "s", fmt::join(d.signer_key_ids, ", "));
  } else {
    out += fmt::format("signature  UNVERIFIED: signature not checked (pass --trust KEY.pub); envelope names key id{} {}\n",
                       d.envelope_key_ids.size() == 1 ? "" : "s", fmt::join(d.envelope_key_ids, ", "));
  }
  out += fmt::format("channel    {}\n", m.channel);
  // prewarm build's default serial is the build time, issued-at's source
  // too; say so, since the next bundle on this channel needs a higher one.
  const auto issued = static_cast<std::uint64_t>(m.issued_at.time_since_epoch().count());
  const bool build_time = m.serial + 60 >= issued && m.serial <= issued + 60;
  out += fmt::format("serial     {}{}\n", m.serial,
                     build_time ? " (the build time: prewarm build's default; a later build gets a higher one)" : "");
  out += fmt::format("issued-at  {}\n", format_rfc3339(m.issued_at));
  out += fmt::format("expires    {}\n", format_rfc3339(m.expires));
  out += fmt::format("producer   {}\n", m.producer);
  out += fmt::format("build      sha256:{}\n", m.build_manifest_sha256);
  for (std::size_t i = 0; i < m.slices.size(); ++i) {
    const auto& s = m.slices[i];
    out += fmt::format("\nslice {}\n", s.id);
    out += fmt::format("  payload  {} ({} compressed, {} of files, {} entries) sha256:{}\n",
                       s.id + ".tar.zst", human_bytes(s.payload_size), human_bytes(s.uncompressed_size), s.entry_count,
                       s.payload_sha256);
    if (s.requirements.empty()) {
      out += "  requires nothing (any host)\n";
    }
    for (const auto& r : s.requirements) {
      const auto why = bundle::why_required(r.key);
      out += fmt::format("  requires {} {} {}{}\n", r.key, r.op, r.value, why.empty() ? "" : fmt::format(" ({})", why));
    }
    if (const auto unchecked = bundle::describe_unchecked_key_inputs(s); !unchecked.empty()) {
      out += fmt::format("  unknown  {}\n", unchecked);
    }
    for (const auto& dir : s.site_packages) {
      out += fmt::format("  python   {} (read at install for framework.*)\n", dir);
    }
    for (const auto& k : d.slice_kinds[i]) {
      out += fmt::format("  kind     {:<9} {} file{}, {}{}\n", k.kind, k.file_count, k.file_count == 1 ? "" : "s", human_bytes(k.total_bytes),
                         k.link_count == 0 ? "" : fmt::format(", {} link{}", k.link_count, k.link_count == 1 ? "" : "s"));
    }
    for (const auto& c : s.caches) {
      out += c.flag ? fmt::format("  cache    custom/{} located by the flag {} in ${} ({}-separated)\n", c.name,
                                  bundle::flag_template(*c.flag), c.variable, bundle::separator_word(c.flag->separator))
                    : fmt::format("  cache    custom/{} located by ${}\n", c.name, c.variable);
    }
    for (const auto& e : s.environment) {
      out += fmt::format("  env      {}={}\n", e.name, e.value);
    }
    if (const auto names = needs_install_environment(s); !names.empty()) {
      out += fmt::format("  policy   needs install.environment: [{}] in the trust policy; with a .pub, or a policy "
                         "that does not name them, env/exec leave them unset\n",
                         fmt::join(names, ", "));
    }
    for (const auto& job : s.jobs) {
      out += fmt::format("  job      {}\n", job);
    }
  }
  return out;
}

std::string
format_json(const BundleDescription& d)
{
  using nlohmann::ordered_json;
  const auto& m = d.manifest;
  ordered_json j;
  j[k_json_schema_version_key] = k_json_schema_version;
  j["bundle"] = d.dir.string();
  j["manifest_sha256"] = d.manifest_sha256;
  j["signature"] = d.signature == SignatureCheck::verified ? "verified" : "not checked";
  j["signer_key_ids"] = d.signer_key_ids;
  j["envelope_key_ids"] = d.envelope_key_ids;
  j["channel"] = m.channel;
  j["serial"] = m.serial;
  j["issued_at"] = format_rfc3339(m.issued_at);
  j["expires"] = format_rfc3339(m.expires);
  j["producer"] = m.producer;
  j["build_manifest_sha256"] = m.build_manifest_sha256;
  j["slices"] = ordered_json::array();
  for (std::size_t i = 0; i < m.slices.size(); ++i) {
    const auto& s = m.slices[i];
    ordered_json slice;
    slice["id"] = s.id;
    slice["payload_sha256"] = s.payload_sha256;
    slice["payload_size"] = s.payload_size;
    slice["uncompressed_size"] = s.uncompressed_size;
    slice["entry_count"] = s.entry_count;
    slice["requirements"] = ordered_json::array();
    for (const auto& r : s.requirements) {
      slice["requirements"].push_back({{"key", r.key}, {"op", r.op}, {"value", r.value}, {"why", bundle::why_required(r.key)}});
    }
    if (const auto unchecked = bundle::unchecked_key_inputs(s); !unchecked.empty()) { // only when present
      slice["unknown_key_inputs"] = unchecked;
    }
    slice["jobs"] = s.jobs;
    if (!s.site_packages.empty()) {
      slice["site_packages"] = s.site_packages;
    }
    if (!s.caches.empty()) { // only when present: older readers' output is unchanged
      slice["caches"] = ordered_json::array();
      for (const auto& c : s.caches) {
        auto cache = ordered_json{{"name", c.name}, {"variable", c.variable}};
        if (c.flag) { // only when present, as above
          cache["flag"] = bundle::flag_template(*c.flag);
          cache["separator"] = bundle::separator_word(c.flag->separator);
        }
        slice["caches"].push_back(std::move(cache));
      }
    }
    if (!s.environment.empty()) {
      slice["environment"] = ordered_json::object();
      for (const auto& e : s.environment) {
        slice["environment"][e.name] = e.value;
      }
    }
    if (const auto names = needs_install_environment(s); !names.empty()) {
      slice["needs_install_environment"] = names; // only when present, as caches and environment
    }
    slice["kinds"] = ordered_json::array();
    for (const auto& k : d.slice_kinds[i]) {
      ordered_json kind = {{"kind", k.kind}, {"files", k.file_count}, {"bytes", k.total_bytes}};
      if (k.link_count > 0) {
        kind["links"] = k.link_count;
      }
      slice["kinds"].push_back(std::move(kind));
    }
    j["slices"].push_back(std::move(slice));
  }
  return j.dump(2) + "\n";
}

} // namespace prewarm::pack
