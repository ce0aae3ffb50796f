// SPDX-License-Identifier: Apache-2.0
#include "audit/cache_usage.hpp"
#include "audit/layer_audit_log.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace prewarm::audit;

TEST(LayerAuditLog, ParsesEventsAndCountsMalformedLines)
{
  const auto log = parse_layer_audit_log(
    R"({"event":"hit","key":"abc","kernels":["sgemm"],"build_ms":1.5})"
    "\n"
    R"({"event":"miss","key":"def","kernels":["axpy","copy"],"build_ms":480,"future":1})"
    "\n\nnot json\n"
    R"({"event":"maybe"})"
    "\n");
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_TRUE(log.events[0].hit);
  EXPECT_EQ(log.events[1].kernels, (std::vector<std::string>{"axpy", "copy"}));
  EXPECT_DOUBLE_EQ(log.events[1].build_ms, 480);
  EXPECT_EQ(log.malformed_lines, 2u);
}

TEST(LayerAuditLog, PassThroughsAreMissesWithTheirReason)
{
  const auto log = parse_layer_audit_log(
    R"({"event":"miss","key":"","keys":[],"stage":"build","reason":"passed through: a computed #include","passed_through":true})"
    "\n"
    R"({"event":"miss","key":"abc","stage":"compile","reason":"not in the store"})"
    "\n");
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_FALSE(log.events[0].hit);
  EXPECT_TRUE(log.events[0].passed_through);
  EXPECT_EQ(log.events[0].reason, "passed through: a computed #include");
  EXPECT_EQ(log.events[0].stage, "build");
  EXPECT_FALSE(log.events[1].passed_through);
  EXPECT_EQ(log.events[1].stage, "compile");
  EXPECT_EQ(log.events[1].reason, "not in the store");
}

TEST(LayerAuditLog, EventsBecomeKindPrograms)
{
  UsageReport report;
  add_layer_events(report, parse_layer_audit_log(R"({"event":"hit","key":"k1","kernels":["a"]})"
                                                 "\n"
                                                 R"({"event":"miss","key":"k2","kernels":["b"]})"
                                                 "\n"));
  const auto* programs = report.find("programs");
  ASSERT_NE(programs, nullptr);
  EXPECT_EQ(programs->layer_hits, 1u);
  EXPECT_EQ(programs->layer_misses, 1u);
  EXPECT_FALSE(programs->hit());
  EXPECT_EQ(programs->summary(), "programs: 1 programs served, 1 built (built key k2 [b])");
  const auto json = to_json(report);
  EXPECT_EQ(json["kinds"][0]["new_entries"][0]["kernels"][0], "b");
}

TEST(LayerAuditLog, AbsentFileIsNoEvents)
{
  const auto log = read_layer_audit_log("/nonexistent/prewarm-layer.log");
  ASSERT_TRUE(log.has_value());
  EXPECT_TRUE(log->events.empty());
}
