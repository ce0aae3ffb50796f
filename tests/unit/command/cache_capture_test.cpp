// SPDX-License-Identifier: Apache-2.0
#include "command/cache_capture.hpp"

#include "base/files.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace prewarm::command {
namespace {

namespace fs = std::filesystem;

void
write(const fs::path& path, std::string_view bytes)
{
  fs::create_directories(path.parent_path());
  ASSERT_TRUE(write_file_atomic(path, bytes, 0644, Durability::none));
}

bool
any_contains(const std::vector<std::string>& lines, std::string_view needle)
{
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

TEST(CacheCapture, PrepareCreatesOneStagingDirectoryPerKindAndAPrivateHome)
{
  auto dir = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir);
  auto capture = CacheCapture::prepare(dir->path(), {CacheKind::neo, CacheKind::pocl, CacheKind::neo});
  ASSERT_TRUE(capture) << capture.error().message();
  EXPECT_EQ(capture->kinds(), (std::vector<CacheKind>{CacheKind::pocl, CacheKind::neo}));
  EXPECT_TRUE(fs::is_directory(dir->path() / "staging" / "pocl"));
  // NEO disables its cache for a NEO_CACHE_DIR that does not exist.
  EXPECT_TRUE(fs::is_directory(dir->path() / "staging" / "neo"));
  EXPECT_FALSE(fs::exists(dir->path() / "staging" / "cuda"));
  // NEO uses $XDG_CACHE_HOME only if it exists.
  EXPECT_TRUE(fs::is_directory(dir->path() / "home" / ".cache"));

  // A second prepare in the same place would mix two captures: refused.
  EXPECT_FALSE(CacheCapture::prepare(dir->path(), {CacheKind::pocl}));
  EXPECT_FALSE(CacheCapture::prepare(dir->path() / "other", {}));
}

TEST(CacheCapture, ChildEnvironmentRedirectsEveryVariableOfTheSelectedKinds)
{
  auto dir = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir);
  auto capture = CacheCapture::prepare(dir->path(), {CacheKind::pocl, CacheKind::neo, CacheKind::cuda});
  ASSERT_TRUE(capture);
  const Environment base = {{"PATH", "/usr/bin"},
                            {"HOME", "/nonexistent/test_only_home"},
                            {"CUDA_CACHE_DISABLE", "1"},
                            {"NEO_CACHE_PERSISTENT", "0"},
                            {"TEST_ONLY_KEEP", "yes"}};
  const auto env = capture->child_environment(base);
  const auto staging = dir->path() / "staging";
  EXPECT_EQ(env.at("POCL_CACHE_DIR"), (staging / "pocl").string());
  EXPECT_EQ(env.at("NEO_CACHE_DIR"), (staging / "neo").string());
  EXPECT_EQ(env.at("NEO_CACHE_PERSISTENT"), "1");
  EXPECT_EQ(env.at("CUDA_CACHE_PATH"), (staging / "cuda").string());
  EXPECT_EQ(env.at("CUDA_CACHE_DISABLE"), "0");
  EXPECT_FALSE(env.contains("TRITON_CACHE_DIR")); // not selected
  EXPECT_EQ(env.at("HOME"), (dir->path() / "home").string());
  EXPECT_EQ(env.at("XDG_CACHE_HOME"), (dir->path() / "home" / ".cache").string());
  EXPECT_EQ(env.at("TEST_ONLY_KEEP"), "yes");
  EXPECT_EQ(env.at("PATH"), "/usr/bin");
}

TEST(CacheCapture, PrivateHomeKeepsDataLocationsOfTheRealHome)
{
  auto dir = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir);
  const auto real_home = dir->path() / "realhome";
  fs::create_directories(real_home / ".local");
  fs::create_directories(real_home / ".cache" / "huggingface");
  fs::create_directories(dir->path() / "work");
  auto capture = CacheCapture::prepare(dir->path() / "work", {CacheKind::triton});
  ASSERT_TRUE(capture);
  const auto env = capture->child_environment({{"HOME", real_home.string()}, {"TORCH_HOME", "/custom"}});
  EXPECT_EQ(env.at("PYTHONUSERBASE"), (real_home / ".local").string());
  EXPECT_EQ(env.at("HF_HOME"), (real_home / ".cache" / "huggingface").string());
  EXPECT_EQ(env.at("TORCH_HOME"), "/custom");  // set by the user: untouched
  EXPECT_FALSE(env.contains("PYENV_ROOT"));     // no ~/.pyenv: nothing to keep

  auto dir2 = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir2);
  CaptureOptions inherited_home;
  inherited_home.home = HomeMode::inherited_home;
  auto inherited = CacheCapture::prepare(dir2->path(), {CacheKind::triton}, inherited_home);
  ASSERT_TRUE(inherited);
  const auto env2 = inherited->child_environment({{"HOME", real_home.string()}});
  EXPECT_EQ(env2.at("HOME"), real_home.string());
  EXPECT_FALSE(env2.contains("XDG_CACHE_HOME"));
  EXPECT_TRUE(env2.contains("TRITON_CACHE_DIR"));
}

// Images set PYTHONDONTWRITEBYTECODE=1; left in the warm-up's environment,
// Python would write no bytecode and the pycache kind would stay empty. Only
// the capture of pycache drops it; it writes under staging, never beside the
// sources or under a prefix of the image.
TEST(CacheCapture, PycacheCaptureDropsDontWriteBytecodeAndPointsThePrefixAtStaging)
{
  auto dir = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir);
  auto capture = CacheCapture::prepare(dir->path(), {CacheKind::pycache});
  ASSERT_TRUE(capture);
  const Environment base = {{"PATH", "/usr/bin"},
                            {"PYTHONDONTWRITEBYTECODE", "1"},
                            {"PYTHONPYCACHEPREFIX", "/nonexistent/test_only_image_prefix"}};
  const auto env = capture->child_environment(base);
  EXPECT_FALSE(env.contains("PYTHONDONTWRITEBYTECODE"));
  EXPECT_EQ(env.at("PYTHONPYCACHEPREFIX"), (dir->path() / "staging" / "pycache").string());
  EXPECT_TRUE(fs::is_directory(dir->path() / "staging" / "pycache"));
  const std::vector<CacheKind> pycache = {CacheKind::pycache};
  const auto traps = environment_traps(base, pycache);
  EXPECT_TRUE(any_contains(traps, "PYTHONDONTWRITEBYTECODE=\"1\" is dropped for the capture of pycache"));
  EXPECT_TRUE(any_contains(traps, "PYTHONPYCACHEPREFIX=\"/nonexistent/test_only_image_prefix\" is overridden"));

  // Without the kind the program's environment is its own.
  auto dir2 = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir2);
  auto inductor = CacheCapture::prepare(dir2->path(), {CacheKind::inductor});
  ASSERT_TRUE(inductor);
  const auto env2 = inductor->child_environment(base);
  EXPECT_EQ(env2.at("PYTHONDONTWRITEBYTECODE"), "1");
  EXPECT_EQ(env2.at("PYTHONPYCACHEPREFIX"), "/nonexistent/test_only_image_prefix");
  const std::vector<CacheKind> inductor_only = {CacheKind::inductor};
  EXPECT_FALSE(any_contains(environment_traps(base, inductor_only), "PYTHON"));
}

TEST(CacheCapture, TrapsInTheEnvironmentAreNamed)
{
  const Environment env = {{"IGC_ShaderDumpEnable", "1"},
                           {"POCL_KERNEL_CACHE", "0"},
                           {"POCL_WORK_GROUP_METHOD", "cbs"},
                           {"CUDA_CACHE_DISABLE", "1"},
                           {"TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1"},
                           {"TRITON_CACHE_MANAGER", "x:Y"}};
  const std::vector<CacheKind> all(bundle::all_cache_kinds().begin(), bundle::all_cache_kinds().end());
  const auto traps = environment_traps(env, all);
  EXPECT_TRUE(any_contains(traps, "IGC_ShaderDumpEnable is set"));
  EXPECT_TRUE(any_contains(traps, "POCL_KERNEL_CACHE=0"));
  EXPECT_TRUE(any_contains(traps, "POCL_WORK_GROUP_METHOD"));
  EXPECT_TRUE(any_contains(traps, "CUDA_CACHE_DISABLE=\"1\" is overridden"));
  EXPECT_TRUE(any_contains(traps, "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1"));
  EXPECT_TRUE(any_contains(traps, "TRITON_CACHE_MANAGER"));

  // Only traps of selected kinds count.
  const std::vector<CacheKind> pocl_only = {CacheKind::pocl};
  const auto pocl_traps = environment_traps(env, pocl_only);
  EXPECT_FALSE(any_contains(pocl_traps, "IGC_"));
  EXPECT_FALSE(any_contains(pocl_traps, "CUDA_CACHE_DISABLE"));
  EXPECT_TRUE(any_contains(pocl_traps, "POCL_KERNEL_CACHE=0"));

  EXPECT_TRUE(environment_traps({{"PATH", "/bin"}}, all).empty());
}

TEST(CacheCapture, CollectCleansBookkeepingAndMeasuresEachKind)
{
  auto dir = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir);
  auto capture = CacheCapture::prepare(dir->path(), {CacheKind::neo, CacheKind::sycl, CacheKind::pocl,
                                                     CacheKind::triton, CacheKind::cuda});
  ASSERT_TRUE(capture);
  const auto neo = capture->staging_dir(CacheKind::neo);
  write(neo / "a" / "b" / "ab12.cl_cache", std::string(100, 'n'));
  write(neo / "config.file", "12345");
  write(neo / "cl_cache.Qw3rT9", "partial");
  const auto sycl = capture->staging_dir(CacheKind::sycl);
  write(sycl / "dev" / "img" / "0.bin", std::string(50, 's'));
  write(sycl / "dev" / "img" / "0.src", "key");
  write(sycl / "dev" / "img" / "0.lock", "");
  write(sycl / "cache_size.txt", "53");
  const auto pocl = capture->staging_dir(CacheKind::pocl);
  write(pocl / "PK" / "HASH" / "program.bc", std::string(10, 'p'));
  write(pocl / "tempfile_VL832x", "t");
  const auto triton = capture->staging_dir(CacheKind::triton);
  write(triton / "KEY" / "k.cubin", std::string(7, 'c'));
  write(triton / "tmp.pid_1_x" / "k.cubin", "half-written");
  ASSERT_EQ(::symlink("/etc/passwd", (triton / "KEY" / "link").c_str()), 0);
  ASSERT_EQ(::mkfifo((triton / "fifo").c_str(), 0600), 0);

  auto summary = capture->collect();
  ASSERT_TRUE(summary) << summary.error().message();
  const auto* n = summary->find(CacheKind::neo);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->files, 1u);
  EXPECT_EQ(n->bytes, 100u);
  EXPECT_EQ(n->bookkeeping_removed, 2u);
  EXPECT_FALSE(fs::exists(neo / "config.file"));
  const auto* s = summary->find(CacheKind::sycl);
  EXPECT_EQ(s->files, 2u);
  EXPECT_EQ(s->bytes, 53u);
  EXPECT_FALSE(fs::exists(sycl / "dev" / "img" / "0.lock"));
  EXPECT_FALSE(fs::exists(sycl / "cache_size.txt"));
  EXPECT_EQ(summary->find(CacheKind::pocl)->files, 1u);
  EXPECT_FALSE(fs::exists(pocl / "tempfile_VL832x"));
  const auto* t = summary->find(CacheKind::triton);
  EXPECT_EQ(t->files, 1u);
  EXPECT_EQ(t->bytes, 7u);
  // What no slice can carry is refused by name and rule (the job then fails
  // before its proof), never dropped from the cache in silence.
  EXPECT_TRUE(any_contains(summary->refusals, "triton: \"KEY/link\" is a symbolic link to \"/etc/passwd\" that no slice can carry"));
  EXPECT_TRUE(any_contains(summary->refusals, "absolute target"));
  EXPECT_TRUE(any_contains(summary->refusals, "triton: \"fifo\" is a socket, fifo or device"));
  EXPECT_EQ(summary->find(CacheKind::cuda)->files, 0u);
  EXPECT_EQ(summary->total_files(), 5u);
  EXPECT_EQ(summary->total_bytes(), 170u);
  // Not empty: no empty-capture warning, and cuda's emptiness is fine for
  // the default selection ("every known kind").
  EXPECT_FALSE(any_contains(summary->warnings, "filled none"));
  EXPECT_FALSE(any_contains(summary->warnings, "cuda"));
}

TEST(CacheCapture, FilesInTheDefaultLocationAreFoldedInWithAWarning)
{
  auto dir = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir);
  auto capture = CacheCapture::prepare(dir->path(), {CacheKind::pocl});
  ASSERT_TRUE(capture);
  const auto fallback = capture->private_home() / ".cache" / "pocl" / "kcache";
  write(fallback / "AB" / "CDEF" / "program.bc", "from-default");
  write(fallback / "AB" / "SAME" / "program.bc", "default-copy");
  write(capture->staging_dir(CacheKind::pocl) / "AB" / "SAME" / "program.bc", "via-variable");
  // A kind nobody asked for, filled anyway.
  write(capture->private_home() / ".nv" / "ComputeCache" / "index", "x");

  auto summary = capture->collect();
  ASSERT_TRUE(summary) << summary.error().message();
  const auto staging = capture->staging_dir(CacheKind::pocl);
  EXPECT_EQ(*read_file(staging / "AB" / "CDEF" / "program.bc"), "from-default");
  EXPECT_EQ(*read_file(staging / "AB" / "SAME" / "program.bc"), "via-variable");
  EXPECT_EQ(summary->find(CacheKind::pocl)->from_default_location, 1u);
  EXPECT_EQ(summary->find(CacheKind::pocl)->files, 2u);
  EXPECT_TRUE(any_contains(summary->warnings, "default location ~/.cache/pocl/kcache"));
  EXPECT_TRUE(any_contains(summary->warnings, "cuda: the program filled ~/.nv/ComputeCache"));
}

TEST(CacheCapture, EmptyCaptureWarnsNamingTheKindsExpected)
{
  auto dir = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir);
  auto capture = CacheCapture::prepare(dir->path(), {CacheKind::cuda, CacheKind::triton});
  ASSERT_TRUE(capture);
  auto summary = capture->collect();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->total_files(), 0u);
  EXPECT_TRUE(any_contains(summary->warnings, "filled none of the caches expected (cuda, triton)"));
}

TEST(CacheCapture, NamedKindLeftEmptyIsWarnedAbout)
{
  auto dir = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir);
  CaptureOptions named_kinds;
  named_kinds.selection = KindSelection::named;
  auto capture = CacheCapture::prepare(dir->path(), {CacheKind::cuda, CacheKind::triton}, named_kinds);
  ASSERT_TRUE(capture);
  write(capture->staging_dir(CacheKind::triton) / "K" / "k.json", "{}");
  auto summary = capture->collect();
  ASSERT_TRUE(summary);
  EXPECT_TRUE(any_contains(summary->warnings, "left cuda empty although the workload names it"));
}

TEST(CacheCapture, CollectFailsWhenTheProgramRemovedItsStagingDirectory)
{
  auto dir = TempDir::create("test_only_capture-");
  ASSERT_TRUE(dir);
  auto capture = CacheCapture::prepare(dir->path(), {CacheKind::pocl});
  ASSERT_TRUE(capture);
  fs::remove(capture->staging_dir(CacheKind::pocl));
  auto summary = capture->collect();
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().message().find("staging/pocl"), std::string::npos);
}

} // namespace
} // namespace prewarm::command
