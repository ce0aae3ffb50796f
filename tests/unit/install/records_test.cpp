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

namespace {

StartRecord
sample_start_record()
{
  StartRecord r;
  r.runtime = std::string(start_record_runtime());
  r.manifest_sha256 = k_digest;
  r.policy = std::string(64, 'b');
  r.issued_at = *parse_rfc3339("2026-11-21T09:30:00Z");
  r.expires = *parse_rfc3339("2027-02-19T09:30:00Z");
  r.frameworks_wanted = true;
  r.site_packages = {"/venv/lib/python3.11/site-packages"};
  r.refused = {"slice cpu: custom cache tinygrad will not be exported: FOO is not on the list"};
  r.root = "/var/cache/my prewarm";
  r.environment_recorded = true;
  r.version_paths.directories = {{"custom/clfft", true}, {"programs", false}};
  r.version_paths.settings = {{"CLFFT_CACHE_PATH", "/var/cache/my prewarm/.prewarm/versions/v1/custom/clfft"},
                              {"EMPTY", ""}};
  r.version_paths.warnings = {"OTHER left unset: installed slices set it to 'a' and 'b'"};
  r.root_paths.settings = {{"CLFFT_CACHE_PATH", "/var/cache/my prewarm/custom/clfft"}};
  return r;
}

} // namespace

// The start record round-trips, values with spaces and empty values included.
TEST(InstallRecords, StartRecordRoundTrip)
{
  const auto r = sample_start_record();
  const auto text = serialize(r);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("\nset CLFFT_CACHE_PATH /var/cache/my prewarm/custom/clfft\n"), std::string::npos) << *text;
  auto parsed = parse_start_record(*text);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(*parsed, r);

  auto at_exec = sample_start_record();
  at_exec.environment_recorded = false;
  at_exec.version_paths = {};
  at_exec.root_paths = {};
  auto parsed_at_exec = parse_start_record(*serialize(at_exec));
  ASSERT_TRUE(parsed_at_exec) << parsed_at_exec.error().message();
  EXPECT_EQ(*parsed_at_exec, at_exec);
}

// A record is never half read: damage, reordering and a value that the
// grammar cannot carry are refused (exec and install then take the full path).
TEST(InstallRecords, DamagedStartRecordIsRejected)
{
  const auto text = *serialize(sample_start_record());
  EXPECT_FALSE(parse_start_record(text.substr(0, text.size() - 1)));
  EXPECT_FALSE(parse_start_record(text + "extra line\n"));
  std::string twice_root = text;
  twice_root.replace(twice_root.find("paths version\n"), 14, "paths root\n");
  EXPECT_FALSE(parse_start_record(twice_root));
  std::string bad_digest = text;
  bad_digest.replace(bad_digest.find(k_digest), 1, "A");
  EXPECT_FALSE(parse_start_record(bad_digest));

  auto multi_line = sample_start_record();
  multi_line.root_paths.settings = {{"X", "two\nlines"}};
  EXPECT_FALSE(serialize(multi_line));
}
