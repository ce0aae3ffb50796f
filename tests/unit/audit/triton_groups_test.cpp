// SPDX-License-Identifier: Apache-2.0
// Triton's group files relocated to where the cache is installed
// (audit/triton_groups.hpp). The format test writes group files as Triton
// 3.x's FileCacheManager.put_group does; RealTritonFindsRelocatedKernels
// drives Triton's own FileCacheManager (get_group on the relocated tree) when
// a Python with triton is found (PREWARM_TEST_TRITON_PYTHON, else python3;
// triton imports without a GPU), and skips otherwise.
#include "audit/triton_groups.hpp"

#include "audit_scratch.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace prewarm::audit;
using prewarm::audit::testing::Scratch;
using prewarm::audit::testing::write_file;

namespace {

std::string
read_text(const fs::path& p)
{
  std::ifstream in(p);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

// A kernel entry as put_group() leaves it: files and a group naming them
// by their absolute paths under `written_at`.
void
triton_entry(const fs::path& root, const fs::path& written_at, const std::string& key, const std::string& kernel)
{
  nlohmann::json children = nlohmann::json::object();
  for (const auto* ext : {".json", ".cubin", ".ptx"}) {
    const auto name = kernel + ext;
    write_file(root / key / name, "content of " + name);
    children[name] = (written_at / key / name).string();
  }
  write_file(root / key / ("__grp__" + kernel + ".json"), nlohmann::json{{"child_paths", children}}.dump());
}

std::string
shell_quoted(const std::string& text)
{
  std::string out = "'";
  for (const char c : text) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

std::string
run_output(const std::string& command)
{
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    while (const auto n = std::fread(buffer, 1, sizeof buffer, pipe)) {
      out.append(buffer, n);
    }
    ::pclose(pipe);
  }
  return out;
}

} // namespace

TEST(TritonGroups, GroupFileNames)
{
  EXPECT_TRUE(is_triton_group_file("__grp__add_kernel.json"));
  EXPECT_FALSE(is_triton_group_file("add_kernel.json"));
  EXPECT_FALSE(is_triton_group_file("__grp__.json"));
  EXPECT_TRUE(kind_holds_triton_groups("triton"));
  EXPECT_TRUE(kind_holds_triton_groups("inductor"));
  EXPECT_FALSE(kind_holds_triton_groups("pocl"));
}

TEST(TritonGroups, PathsOfTheBuildPointAtTheInstalledTree)
{
  Scratch s;
  const fs::path build = "/tmp/prewarm-build-1234/job/staging/triton";
  const auto installed = s.dir / "root/triton";
  triton_entry(installed, build, "OQ6XBR3GKEY", "add_kernel");
  ::chmod((installed / "OQ6XBR3GKEY/__grp__add_kernel.json").c_str(), 0444);
  const auto relocated = relocate_triton_groups(installed, installed);
  ASSERT_TRUE(relocated.has_value()) << relocated.error().describe();
  EXPECT_EQ(relocated->groups_seen, 1u);
  EXPECT_EQ(relocated->groups_rewritten, 1u);
  EXPECT_EQ(relocated->paths_rewritten, 3u);
  EXPECT_EQ(relocated->rewritten, (std::vector<std::string>{"OQ6XBR3GKEY/__grp__add_kernel.json"}));
  const auto group = nlohmann::json::parse(read_text(installed / "OQ6XBR3GKEY/__grp__add_kernel.json"));
  EXPECT_EQ(group["child_paths"]["add_kernel.cubin"], (installed / "OQ6XBR3GKEY/add_kernel.cubin").string());
  struct stat st{};
  ASSERT_EQ(::stat((installed / "OQ6XBR3GKEY/__grp__add_kernel.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0444u) << "the mode the slice gave it";
  // Done again: nothing left to change.
  const auto again = relocate_triton_groups(installed, installed);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->groups_rewritten, 0u);
}

TEST(TritonGroups, InductorsTritonKernelsToo)
{
  Scratch s;
  const auto installed = s.dir / "root/inductor";
  triton_entry(installed / "triton/0", "/build/staging/inductor/triton/0", "XYZ", "triton_poi_fused_add_0");
  const auto relocated = relocate_triton_groups(installed, installed);
  ASSERT_TRUE(relocated.has_value());
  EXPECT_EQ(relocated->paths_rewritten, 3u);
  const auto group = nlohmann::json::parse(read_text(installed / "triton/0/XYZ/__grp__triton_poi_fused_add_0.json"));
  EXPECT_EQ(group["child_paths"]["triton_poi_fused_add_0.ptx"],
            (installed / "triton/0/XYZ/triton_poi_fused_add_0.ptx").string());
}

TEST(TritonGroups, NothingIsPointedOutsideTheTree)
{
  std::uint64_t rewritten = 0;
  const auto exists = [](std::string_view leaf) { return leaf == "k.cubin"; };
  // A file that is not beside the group, a relative path, a leaf of "..":
  // left as they are (Triton misses on them, as it would have).
  const auto json = relocated_group_json(
    R"({"child_paths": {"k.cubin": "/b/K/k.cubin", "k.ptx": "/b/K/k.ptx", "r": "K/k.cubin", "d": "/b/.."}})",
    "/root/triton", "K", exists, rewritten);
  EXPECT_EQ(rewritten, 1u);
  const auto group = nlohmann::json::parse(json);
  EXPECT_EQ(group["child_paths"]["k.cubin"], "/root/triton/K/k.cubin");
  EXPECT_EQ(group["child_paths"]["k.ptx"], "/b/K/k.ptx");
  EXPECT_EQ(group["child_paths"]["r"], "K/k.cubin");
  EXPECT_EQ(group["child_paths"]["d"], "/b/..");
  EXPECT_TRUE(relocated_group_json("{not json", "/root/triton", "K", exists, rewritten).empty());
  EXPECT_TRUE(relocated_group_json(R"({"other": 1})", "/root/triton", "K", exists, rewritten).empty());
}

TEST(TritonGroups, ASymlinkBesideTheGroupIsNoChild)
{
  Scratch s;
  const auto installed = s.dir / "triton";
  triton_entry(installed, "/b", "K", "k");
  fs::remove(installed / "K/k.cubin");
  fs::create_symlink("/etc/passwd", installed / "K/k.cubin");
  const auto relocated = relocate_triton_groups(installed, installed);
  ASSERT_TRUE(relocated.has_value());
  EXPECT_EQ(relocated->paths_rewritten, 2u) << "k.json and k.ptx; the link is left alone";
  const auto group = nlohmann::json::parse(read_text(installed / "K/__grp__k.json"));
  EXPECT_EQ(group["child_paths"]["k.cubin"], "/b/K/k.cubin");
}

TEST(TritonGroups, RealTritonFindsRelocatedKernels)
{
  const char* configured = std::getenv("PREWARM_TEST_TRITON_PYTHON");
  const std::string python = configured != nullptr ? configured : "python3";
  if (run_output(python + " -c 'import triton.runtime.cache; print(\"ok\")' 2>/dev/null") != "ok\n") {
    GTEST_SKIP() << "no triton for " << python << " (pip install triton, or PREWARM_TEST_TRITON_PYTHON=PYTHON)";
  }
  Scratch s;
  const auto script = s.dir / "groups.py";
  // Triton's own FileCacheManager writes a group at `build`, or reads one
  // at `installed`: the same calls compiler.py makes.
  write_file(script, R"(import os, sys
os.environ["TRITON_CACHE_DIR"] = sys.argv[2]
from triton.runtime.cache import FileCacheManager
m = FileCacheManager("KEY0123")
if sys.argv[1] == "put":
    group = {n: m.put(b"bytes of " + n.encode(), n, binary=True) for n in ("k.cubin", "k.ptx")}
    group["k.json"] = m.put('{"name": "k"}', "k.json", binary=False)
    m.put_group("k.json", group)
else:
    print("hit" if m.get_group("k.json") is not None else "miss")
)");
  const auto build = s.dir / "build/staging/triton";
  const auto installed = s.dir / "root (installed)/triton";
  const auto py = [&](const std::string& verb, const fs::path& dir) {
    return run_output(python + " " + shell_quoted(script.string()) + " " + verb + " " + shell_quoted(dir.string()) +
                      " 2>&1");
  };
  ASSERT_EQ(py("put", build), "");
  ASSERT_EQ(py("get", build), "hit\n");
  fs::create_directories(installed.parent_path());
  fs::rename(build, installed);
  EXPECT_EQ(py("get", installed), "miss\n") << "Triton's own behaviour: the group names the build's paths";
  const auto relocated = relocate_triton_groups(installed, installed);
  ASSERT_TRUE(relocated.has_value()) << relocated.error().describe();
  EXPECT_EQ(relocated->paths_rewritten, 3u);
  EXPECT_EQ(py("get", installed), "hit\n") << read_text(installed / "KEY0123/__grp__k.json");
}
