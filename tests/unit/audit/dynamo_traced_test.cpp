// SPDX-License-Identifier: Apache-2.0
// Kind dynamo: a loaded precompiled frame looks nothing up in AOTAutograd's
// cache, so an AOTAutograd entry read or written in a run is a graph Dynamo
// traced there (cache_kind.hpp traced_graph_entries). The trees have
// torch 2.11's layout; the reads and writes are real syscalls under a real
// inotify watch.
#include "audit/access_watch.hpp"
#include "audit/cache_usage.hpp"
#include "audit/file_inventory.hpp"

#include "audit_scratch.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <iterator>

namespace fs = std::filesystem;
using namespace prewarm::audit;
using prewarm::audit::testing::Scratch;
using prewarm::audit::testing::write_file;

namespace {

KindUsage
watched(const std::string& kind, const fs::path& dir, const std::function<void()>& act)
{
  const auto before = list_files(dir);
  EXPECT_TRUE(before.has_value());
  auto watch = AccessWatch::start({{kind, dir}});
  EXPECT_TRUE(watch.has_value());
  act();
  const auto record = (*watch)->stop();
  const auto after = list_files(dir);
  return measure_kind(kind, dir, *before, *after, &record.kinds.at(kind));
}

void
read(const fs::path& file)
{
  std::ifstream in(file);
  ASSERT_TRUE(in.good()) << file;
  std::string text((std::istreambuf_iterator<char>(in)), {});
}

// What a capture of one compiled frame leaves: the frame, its AOTAutograd
// and FX graph entries, the kernel it built.
void
captured_tree(const fs::path& dir)
{
  write_file(dir / "dynamo/c1d0f09b3add2957aa/entry", "precompiled frame");
  write_file(dir / "aotautograd/arvdqdvu6gfh2ko6/siwuplh6yrckmmxn", "aot entry");
  write_file(dir / "fxgraph/2s/f2sjw6mh7iyq4agx/zo4azorg32k2y4x", "fx graph");
  write_file(dir / "aq/caqgqnm6q2ieofnmg6j.so", "kernel");
}

} // namespace

TEST(DynamoTraced, ALoadedFrameTracesNothing)
{
  Scratch s;
  captured_tree(s.dir);
  const auto usage = watched("dynamo", s.dir, [&] {
    read(s.dir / "dynamo/c1d0f09b3add2957aa/entry");
    read(s.dir / "aq/caqgqnm6q2ieofnmg6j.so");
  });
  EXPECT_EQ(usage.reused_files, 2u);
  EXPECT_EQ(usage.traced_graphs, 0u);
  EXPECT_TRUE(usage.hit());
  EXPECT_EQ(usage.summary(), "dynamo: 2 reused, 0 new");
}

TEST(DynamoTraced, ARejectedFrameIsTracedAndCompiledAnew)
{
  // PyTorch read the frame, found the model's source changed, traced it:
  // a new AOTAutograd entry and FX graph.
  Scratch s;
  captured_tree(s.dir);
  const auto usage = watched("dynamo", s.dir, [&] {
    read(s.dir / "dynamo/c1d0f09b3add2957aa/entry");
    write_file(s.dir / "aotautograd/a2cvoomidcakzg67/titrpm65t44ngvgg", "new aot entry");
    write_file(s.dir / "fxgraph/gb/fgbsvv6gulynrf3t/x", "new fx graph");
  });
  EXPECT_EQ(usage.traced_graphs, 1u);
  EXPECT_EQ(usage.new_files, 2u);
  EXPECT_EQ(usage.summary().substr(0, 48), "dynamo: 1 reused, 2 new, Dynamo traced 1 graph (");
  EXPECT_EQ(to_json(usage)["traced_graphs"], 1);
}

TEST(DynamoTraced, ATraceThatHitsInductorsCacheIsStillATrace)
{
  // Guards failed, Dynamo traced again and AOTAutograd's cache hit: nothing
  // new, yet the kind did not spare the trace; the count says so.
  Scratch s;
  captured_tree(s.dir);
  const auto usage = watched("dynamo", s.dir, [&] {
    read(s.dir / "dynamo/c1d0f09b3add2957aa/entry");
    read(s.dir / "aotautograd/arvdqdvu6gfh2ko6/siwuplh6yrckmmxn");
  });
  EXPECT_EQ(usage.new_files, 0u);
  EXPECT_EQ(usage.traced_graphs, 1u);
  EXPECT_EQ(usage.summary(), "dynamo: 2 reused, 0 new, Dynamo traced 1 graph");
  EXPECT_FALSE(usage.hit()) << "the kind did not spare the trace";
  EXPECT_FALSE(to_json(usage)["hit"].get<bool>());
}

TEST(DynamoTraced, OnlyTheDynamoKindCountsTraces)
{
  // The inductor kind holds no precompiled frames: its AOTAutograd lookups
  // are how it is meant to hit.
  Scratch s;
  captured_tree(s.dir);
  const auto usage =
    watched("inductor", s.dir, [&] { read(s.dir / "aotautograd/arvdqdvu6gfh2ko6/siwuplh6yrckmmxn"); });
  EXPECT_FALSE(usage.traced_graphs.has_value());
  EXPECT_FALSE(to_json(usage).contains("traced_graphs"));
  EXPECT_EQ(usage.summary(), "inductor: 1 reused, 0 new");
}
