// SPDX-License-Identifier: Apache-2.0
#include "install/install_records.hpp"

#include <gtest/gtest.h>

using namespace prewarm;
using namespace prewarm::install;

namespace {

const std::string k_digest(64, 'a');

InstalledMarker
sample_marker()
{
  InstalledMarker m;
  m.manifest_sha256 = k_digest;
  m.channel = "prod/llm";
  m.serial = 7;
  m.installed_at = *parse_rfc3339("2026-11-21T09:30:00Z");
  m.slice_ids = {"a770", "cpu"};
  m.kinds = {{"neo", 3, 1024}, {"pocl", 1, 10}};
  return m;
}

} // namespace

TEST(InstallRecords, MarkerRoundTrip)
{
  const auto m = sample_marker();
  auto parsed = parse_marker(serialize(m));
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(*parsed, m);
}

// The host fingerprint is optional (markers written before it parse), one
// line at its place.
TEST(InstallRecords, MarkerWithHostFingerprint)
{
  auto m = sample_marker();
  m.host_fingerprint = std::string(64, 'c');
  const auto text = serialize(m);
  EXPECT_NE(text.find("\nhost-fingerprint " + m.host_fingerprint + "\nslice a770\n"), std::string::npos) << text;
  auto parsed = parse_marker(text);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(*parsed, m);
  EXPECT_EQ(serialize(sample_marker()).find("host-fingerprint"), std::string::npos);
  std::string misplaced = serialize(sample_marker()) + "host-fingerprint " + m.host_fingerprint + "\n";
  EXPECT_FALSE(parse_marker(misplaced));
  std::string short_digest = text;
  short_digest.replace(short_digest.find("host-fingerprint c") + 17, 1, "");
  EXPECT_FALSE(parse_marker(short_digest));
}

TEST(InstallRecords, DamagedMarkerIsRejected)
{
  const auto text = serialize(sample_marker());
  EXPECT_FALSE(parse_marker(text.substr(0, text.size() - 1))); // lost final LF
  EXPECT_FALSE(parse_marker(text + "extra line\n"));
  std::string upper = text;
  upper.replace(upper.find(k_digest), 1, "A");
  EXPECT_FALSE(parse_marker(upper));
}

TEST(InstallRecords, StateRoundTripAndDamage)
{
  ChannelState state{{"default", {3, k_digest}}, {"prod/llm", {9, std::string(64, 'b')}}};
  const auto text = serialize(state);
  auto parsed = parse_state(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, state);
  EXPECT_FALSE(parse_state("prewarm-state 1\nchannel default x " + k_digest + "\n"));
  EXPECT_FALSE(parse_state("prewarm-state 2\n"));
}
