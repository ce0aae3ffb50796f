// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/neo_card_slice.hpp"

#include "aot/ocloc.hpp"
#include "virtual_device/virtual_device.hpp"

#include <fmt/format.h>

namespace prewarm::virtual_device {

namespace fs = std::filesystem;

Result<NeoRecording>
read_neo_recording(const manifest::Target& target, const fs::path& neo_cache)
{
  NeoRecording recording;
  PW_ASSIGN(recording.profile, manifest::embedded_intel_profile(target.name));
  if (!recording.profile) {
    return recording;
  }
  if (target.ip_version.empty()) {
    return fail(Errc::usage, fmt::format("{}: the registry gives no ip_version, which NEO's key hashes", target.name));
  }
  PW_ASSIGN(const auto ip, neo::IpVersion::parse(target.ip_version));
  PW_ASSIGN(recording.entries, neo::recorded_entries(neo_cache, ip));
  return recording;
}

Result<std::optional<CardEntries>>
add_card_entries(const IntelRoot& root, const NeoRecording& recording, const fs::path& staged_neo,
                   const fs::path& scratch)
{
  if (!recording.profile) {
    return std::optional<CardEntries>{};
  }
  const auto& profile = *recording.profile;
  PW_ASSIGN(const auto card, neo::card_key(profile));
  PW_ASSIGN(const auto ocloc, aot::Ocloc::at(root.dir() / "host-bin" / "ocloc"));
  const auto out = scratch / "neo";
  std::error_code ec;
  fs::remove_all(out, ec);
  PW_ASSIGN(const auto made, neo::synthesize(ocloc, recording.entries, card, out));

  for (const auto& entry : made.entries) {
    fs::create_directories((staged_neo / entry).parent_path(), ec);
    fs::rename(out / entry, staged_neo / entry, ec);
    if (ec) {
      return fail(Errc::failed, fmt::format("staging {}: {}", (staged_neo / entry).string(), ec.message()));
    }
  }
  CardEntries result;
  result.profile = profile.source_name;
  result.entries = made.entries.size();
  result.bytes = made.bytes;
  result.seconds = made.seconds;
  result.skipped = made.skipped;
  for (const auto& unknown : profile.unknown) {
    result.unknown.push_back(fmt::format("{}: {}", unknown.field, unknown.why));
  }
  result.device_id = profile.device_id.value;
  result.revision = profile.revision.value;
  return std::optional(std::move(result));
}

} // namespace prewarm::virtual_device
