// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/neo_card_slice.hpp"

#include "aot/ocloc.hpp"
#include "base/device_properties.hpp"
#include "jobs/staged_kind.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace prewarm::virtual_device {

namespace fs = std::filesystem;

Result<IntelTarget>
resolve_intel_target(const manifest::Target& target, const manifest::IntelProfile* named)
{
  IntelTarget resolved;
  resolved.target = &target;
  if (named != nullptr) {
    resolved.profile = *named;
  } else {
    PW_ASSIGN(resolved.profile, manifest::embedded_intel_profile(target.name));
  }
  PW_ASSIGN(resolved.device, virtual_device_for(target, resolved.profile ? &*resolved.profile : nullptr));
  return resolved;
}

namespace {

// The card's entries synthesized from the traces NEO left in `neo_cache`
// (nullopt: the target has no key profile).
Result<std::optional<CardEntries>>
synthesize_card_entries(const NeoRecording::Request& request)
{
  const auto& target = *request.target.target;
  if (!request.target.profile) {
    return std::optional<CardEntries>{};
  }
  const auto& profile = *request.target.profile;
  if (target.ip_version.empty()) {
    return fail(Errc::usage, fmt::format("{}: the registry gives no ip_version, which NEO's key hashes", target.name));
  }
  PW_ASSIGN(const auto ip, neo::IpVersion::parse(target.ip_version));
  PW_ASSIGN(const auto recorded, neo::recorded_entries(request.neo_cache, ip));
  PW_ASSIGN(const auto card, neo::card_key(profile, request.device_extensions));
  PW_ASSIGN(const auto ocloc, aot::Ocloc::at(request.root.dir() / "host-bin" / "ocloc"));
  const auto out = request.scratch / "neo";
  std::error_code ec;
  fs::remove_all(out, ec);
  PW_ASSIGN(const auto made, neo::synthesize(ocloc, recorded, card, out, request.jobs));

  CardEntries result;
  result.profile = profile.source_name;
  result.dir = out;
  result.paths = made.entries;
  result.entries = made.entries.size();
  result.bytes = made.bytes;
  result.seconds = made.seconds;
  result.skipped = made.skipped;
  for (const auto& unknown : profile.unknown) {
    result.unknown.push_back(fmt::format("{}: {}", unknown.field, unknown.why));
    result.unknown_fields.push_back(unknown.field);
  }
  result.key = card;
  result.device_id = profile.device_id.value;
  result.revision = profile.revision.value;
  return std::optional(std::move(result));
}

} // namespace

Result<NeoRecording>
NeoRecording::take(const Request& request)
{
  NeoRecording recording;
  recording.m_neo_cache = request.neo_cache;
  PW_ASSIGN(recording.m_key, read_traced_key(request.neo_cache));
  // Before the cleaning below removes the traces the synthesis reads.
  PW_ASSIGN(recording.m_card, synthesize_card_entries(request));
  PW_ASSIGN(const auto cleaned, jobs::clean_staged_kind(bundle::CacheKind::neo, request.neo_cache));
  recording.m_bookkeeping_removed = cleaned.bookkeeping_removed;
  return recording;
}

Result<std::vector<bundle::Requirement>>
NeoRecording::requirements(std::string_view release, const ReplayResult& device, OpenclEntries opencl) const
{
  auto out = neo_slice_requirements(release, m_key, device, opencl);
  PW_TRY(accept_card(out, m_card, device.extensions));
  return out;
}

Status
NeoRecording::stage()
{
  if (m_staged) {
    return fail(Errc::internal, fmt::format("the card's entries were staged into {} already", m_neo_cache.string()));
  }
  m_staged = true;
  if (!m_card) {
    return {};
  }
  std::error_code ec;
  for (const auto& entry : m_card->paths) {
    fs::create_directories((m_neo_cache / entry).parent_path(), ec);
    fs::rename(m_card->dir / entry, m_neo_cache / entry, ec);
    if (ec) {
      return fail(Errc::failed, fmt::format("staging {}: {}", (m_neo_cache / entry).string(), ec.message()));
    }
  }
  return {};
}

namespace {

// Whether the card's value of a requirement's key is one the profile only assumes.
bool
assumed(const CardEntries& card, std::string_view key)
{
  std::string_view field;
  if (key == prop::pci_revision) {
    field = "key.revision";
  } else if (key == prop::intel_ip_version) {
    field = "key.ip_version";
  } else if (key == prop::intel_opencl_extensions) {
    field = "opencl.extensions";
  } else {
    return false;
  }
  return std::ranges::any_of(card.unknown_fields, [&](const std::string& f) { return f.starts_with(field); });
}

} // namespace

Status
accept_card(std::vector<bundle::Requirement>& requirements, const std::optional<CardEntries>& card,
            std::string_view device_extensions)
{
  if (!card) {
    return {};
  }
  // The card's lists as the synthesis made them (the profile's measured list where it has one).
  std::vector<std::string> extension_values;
  for (const auto& list : card->key.extension_lists) {
    extension_values.push_back(opencl_extensions_value(fmt::format("{}", fmt::join(list, " "))));
  }
  if (extension_values.empty() && !device_extensions.empty()) {
    PW_ASSIGN(const auto lists, neo::card_extension_lists(device_extensions, card->key));
    for (const auto& list : lists) {
      extension_values.push_back(opencl_extensions_value(list));
    }
  }
  for (auto& r : requirements) {
    std::vector<std::string> cards;
    if (r.key == prop::pci_revision) {
      cards = {card->revision};
    } else if (r.key == prop::intel_ip_version) {
      cards = {card->key.ip_version.text()};
    } else if (r.key == prop::intel_opencl_extensions) {
      cards = extension_values;
    }
    if (r.op != "==" || cards.empty()) {
      continue;
    }
    std::vector<std::string> values{r.value};
    for (auto& value : cards) {
      if (std::ranges::find(values, value) == values.end()) {
        values.push_back(std::move(value));
      }
    }
    if (values.size() > 1) {
      r = {r.key, "in", fmt::format("{}", fmt::join(values, ","))};
    }
  }
  std::erase_if(requirements, [&](const bundle::Requirement& r) { return assumed(*card, r.key); });
  return {};
}

std::string
NeoRecording::describe() const
{
  const auto& card = m_card;
  if (!card) {
    return "; no key profile: only the virtual device's entries (a card's key differs)";
  }
  return fmt::format("; card entries (key profile {}): {} synthesized, {} bytes, {:.1f} s{}{}", card->profile,
                     card->entries, card->bytes, card->seconds,
                     card->skipped.empty() ? "" : fmt::format(", {} skipped", card->skipped.size()),
                     card->unknown.empty() ? "" : fmt::format(", {} values not known", card->unknown.size()));
}

nlohmann::json
NeoRecording::report() const
{
  const auto& card = m_card;
  if (!card) {
    return nullptr;
  }
  return nlohmann::json{{"profile", card->profile}, {"pci_id", card->device_id},  {"pci_revision", card->revision},
                        {"entries", card->entries}, {"entry_bytes", card->bytes}, {"seconds", card->seconds},
                        {"skipped", card->skipped}, {"unknown", card->unknown}};
}

} // namespace prewarm::virtual_device
