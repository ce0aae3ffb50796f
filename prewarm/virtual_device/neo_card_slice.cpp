// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/neo_card_slice.hpp"

#include "aot/ocloc.hpp"
#include "base/device_properties.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace prewarm::virtual_device {

namespace fs = std::filesystem;

Result<std::optional<CardEntries>>
synthesize_card_entries(const IntelRoot& root, const manifest::Target& target, const manifest::IntelProfile* named,
                        const fs::path& neo_cache, const fs::path& scratch, unsigned jobs)
{
  PW_ASSIGN(const auto embedded, manifest::embedded_intel_profile(target.name));
  if (named == nullptr && !embedded) {
    return std::optional<CardEntries>{};
  }
  const auto& profile = named != nullptr ? *named : *embedded;
  if (target.ip_version.empty()) {
    return fail(Errc::usage, fmt::format("{}: the registry gives no ip_version, which NEO's key hashes", target.name));
  }
  PW_ASSIGN(const auto ip, neo::IpVersion::parse(target.ip_version));
  PW_ASSIGN(const auto recorded, neo::recorded_entries(neo_cache, ip));
  PW_ASSIGN(const auto card, neo::card_key(profile));
  PW_ASSIGN(const auto ocloc, aot::Ocloc::at(root.dir() / "host-bin" / "ocloc"));
  const auto out = scratch / "neo";
  std::error_code ec;
  fs::remove_all(out, ec);
  PW_ASSIGN(const auto made, neo::synthesize(ocloc, recorded, card, out, jobs));

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
  }
  result.key = card;
  result.device_id = profile.device_id.value;
  result.revision = profile.revision.value;
  return std::optional(std::move(result));
}

Status
stage_card_entries(const std::optional<CardEntries>& card, const fs::path& neo_cache)
{
  if (!card) {
    return {};
  }
  std::error_code ec;
  for (const auto& entry : card->paths) {
    fs::create_directories((neo_cache / entry).parent_path(), ec);
    fs::rename(card->dir / entry, neo_cache / entry, ec);
    if (ec) {
      return fail(Errc::failed, fmt::format("staging {}: {}", (neo_cache / entry).string(), ec.message()));
    }
  }
  return {};
}

Status
accept_card(std::vector<bundle::Requirement>& requirements, const std::optional<CardEntries>& card,
            std::string_view device_extensions)
{
  if (!card) {
    return {};
  }
  std::vector<std::string> extension_values;
  if (!device_extensions.empty()) {
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
  return {};
}

std::string
describe(const std::optional<CardEntries>& card)
{
  if (!card) {
    return "; no key profile: only the virtual device's entries (a card's key differs)";
  }
  return fmt::format("; card entries (key profile {}): {} synthesized, {} bytes, {:.1f} s{}{}", card->profile,
                     card->entries, card->bytes, card->seconds,
                     card->skipped.empty() ? "" : fmt::format(", {} skipped", card->skipped.size()),
                     card->unknown.empty() ? "" : fmt::format(", {} values not known", card->unknown.size()));
}

std::string
report_json(const std::optional<CardEntries>& card)
{
  if (!card) {
    return "null";
  }
  const nlohmann::json json = {{"profile", card->profile}, {"pci_id", card->device_id},
                               {"pci_revision", card->revision}, {"entries", card->entries},
                               {"entry_bytes", card->bytes}, {"seconds", card->seconds},
                               {"skipped", card->skipped}, {"unknown", card->unknown}};
  return json.dump();
}

} // namespace prewarm::virtual_device
