// SPDX-License-Identifier: Apache-2.0
// The hit proof with small shell programs standing in for a warm-up: one
// that reads what was captured (hit), one that writes anew (miss), one that
// fills a cache no kind captures, one whose captured files hold the capture
// path. Real programs on PoCL: tests/integration/real_programs.
#include "command/hit_proof.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>

namespace fs = std::filesystem;
using namespace prewarm;
using namespace prewarm::command;

namespace {

struct Scratch
{
  fs::path dir = fs::temp_directory_path() / fs::path("prewarm-hit-proof-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Scratch() { fs::create_directories(dir); }
  ~Scratch()
  {
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir, ec);
  }
};

void
write(const fs::path& p, const std::string& text)
{
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

HitProof prove_kinds(const Scratch& s, const std::string& script, std::vector<CacheKind> kinds,
                     std::vector<std::string> capture_paths = {});

HitProof
prove(const Scratch& s, const std::string& script, std::vector<std::string> capture_paths = {},
      CacheKind kind = CacheKind::pocl)
{
  return prove_kinds(s, script, {kind}, std::move(capture_paths));
}

HitProof
prove_kinds(const Scratch& s, const std::string& script, std::vector<CacheKind> kinds,
            std::vector<std::string> capture_paths)
{
  HitProofRequest request;
  request.job_id = "test_only/proof";
  request.run.argv = {script};
  request.run.shell = ShellMode::via_shell;
  request.base_environment = inherited_environment();
  request.captured_root = s.dir / "captured";
  request.kinds = std::move(kinds);
  request.work_dir = s.dir / "proof";
  request.capture_paths = std::move(capture_paths);
  fs::create_directories(request.work_dir);
  auto proof = prove_hits(request);
  EXPECT_TRUE(proof.has_value()) << proof.error().describe();
  return *proof;
}

// A Triton kernel's metadata as its .json holds it (the fields compared here).
std::string
triton_metadata(const std::string& key, int num_warps)
{
  return R"({"name": "k", "hash": ")" + key + R"(", "num_warps": )" + std::to_string(num_warps) + "}";
}

} // namespace

TEST(HitProof, ReadingTheCaptureIsAHit)
{
  Scratch s;
  write(s.dir / "captured/pocl/ab/cdef/program.bc", "bc");
  write(s.dir / "captured/pocl/ab/cdef/add/4-1-1/add.so", "so");
  const auto proof = prove(s, "cat \"$POCL_CACHE_DIR\"/ab/cdef/program.bc \"$POCL_CACHE_DIR\"/ab/cdef/add/4-1-1/add.so");
  EXPECT_TRUE(proof.hit()) << proof.line();
  EXPECT_EQ(proof.line(), "pocl: 2 reused, 0 new");
  EXPECT_TRUE(proof.causes.empty());
}

TEST(HitProof, SameKernelsUnderANewKeyNameTheChangingSource)
{
  Scratch s;
  write(s.dir / "captured/pocl/ab/cdef/program.bc", "bc");
  write(s.dir / "captured/pocl/ab/cdef/add/4-1-1/add.so", "so");
  const auto proof = prove(s, "mkdir -p \"$POCL_CACHE_DIR\"/cd/9876/add/4-1-1 && echo so > "
                              "\"$POCL_CACHE_DIR\"/cd/9876/add/4-1-1/add.so");
  EXPECT_FALSE(proof.hit());
  ASSERT_EQ(proof.misses().size(), 1u);
  EXPECT_NE(proof.misses()[0].find("pocl: 0 reused, 1 new (program cd/9876 [add])"), std::string::npos)
    << proof.misses()[0];
  ASSERT_FALSE(proof.causes.empty());
  // Nothing that records the program's inputs differs: no cause is guessed.
  EXPECT_NE(proof.causes[0].find("cause unknown"), std::string::npos) << proof.causes[0];
  EXPECT_NE(proof.causes[0].find("PYOPENCL_NO_CACHE=1"), std::string::npos) << "the known case, named as one";
}

TEST(HitProof, ADifferingSourceLineIsTheEvidence)
{
  Scratch s;
  write(s.dir / "captured/pocl/ab/cdef/program.cl", "#define N 4\n#define SEED 111\nkernel void add() {}\n");
  write(s.dir / "captured/pocl/ab/cdef/add/4-1-1/add.so", "so");
  const auto proof = prove(s, "d=\"$POCL_CACHE_DIR\"/cd/9876 && mkdir -p \"$d\"/add/4-1-1 && echo so > "
                              "\"$d\"/add/4-1-1/add.so && printf '#define N 4\\n#define SEED 222\\nkernel void "
                              "add() {}\\n' > \"$d\"/program.cl");
  EXPECT_FALSE(proof.hit());
  ASSERT_FALSE(proof.causes.empty());
  EXPECT_NE(proof.causes[0].find("kernel add: program.cl line 2: was \"#define SEED 111\", is \"#define SEED 222\""),
            std::string::npos)
    << proof.causes[0];
}

// What Triton's .llir of an Inductor kernel shows at another path: one long
// line whose difference is its directory, well past any fixed-length prefix.
TEST(HitProof, ALongLineShowsWhereItDiffers)
{
  Scratch s;
  const std::string file = "cox6pldjsz4hrhgzyour2i6cqpmyvz2ozovkd4m5vnf2wrt2zvtb.py";
  const auto llir = [&](const std::string& dir) {
    return "; ModuleID\n!1 = !DIFile(filename: \"" + file + "\", directory: \"" + dir + "/inductor/ox\")\n";
  };
  write(s.dir / "captured/triton/KEYA/k.llir", llir("/tmp/prewarm-build-A/capture/staging"));
  write(s.dir / "captured/triton/KEYA/k.json", R"({"name": "k", "hash": "KEYA"})");
  write(s.dir / "changed.llir", llir("/var/cache/prewarm/elsewhere"));
  const auto proof = prove(s,
                           "mkdir -p \"$TRITON_CACHE_DIR\"/KEYB && cp " + (s.dir / "changed.llir").string() +
                             " \"$TRITON_CACHE_DIR\"/KEYB/k.llir && echo '{\"name\": \"k\", \"hash\": \"KEYB\"}' > "
                             "\"$TRITON_CACHE_DIR\"/KEYB/k.json",
                           {}, CacheKind::triton);
  EXPECT_FALSE(proof.hit());
  ASSERT_FALSE(proof.causes.empty());
  EXPECT_NE(proof.causes[0].find("k.llir line 2: was \"..."), std::string::npos) << proof.causes[0];
  EXPECT_NE(proof.causes[0].find("/tmp/prewarm-build-A"), std::string::npos) << proof.causes[0];
  EXPECT_NE(proof.causes[0].find("/var/cache/prewarm/elsewhere"), std::string::npos) << proof.causes[0];
}

// A Triton kernel compiled again under a new key: torch.compile's known case
// is the one of the kind the manifest selected beside triton. The inductor
// kind's (its fix: the dynamo kind or --capture-root) must not be offered
// where the manifest already has the dynamo kind.
TEST(HitProof, TheKnownTritonCaseIsTheSelectedKinds)
{
  const std::string recompile =
    "mkdir -p \"$TRITON_CACHE_DIR\"/KEYB && echo ELF > \"$TRITON_CACHE_DIR\"/KEYB/k.cubin && "
    "echo '{\"name\": \"k\", \"hash\": \"KEYB\", \"num_warps\": 8}' > "
    "\"$TRITON_CACHE_DIR\"/KEYB/k.json";
  const auto captured = [](const Scratch& s, const char* torch_kind) {
    write(s.dir / "captured/triton/KEYA/k.json", R"({"name": "k", "hash": "KEYA", "num_warps": 4})");
    write(s.dir / "captured/triton/KEYA/k.cubin", "ELF");
    write(s.dir / "captured" / torch_kind / "fx.bin", "");
  };
  const auto triton_cause = [](const HitProof& proof) {
    const auto it = std::ranges::find_if(proof.causes, [](const std::string& c) { return c.starts_with("triton: "); });
    return it == proof.causes.end() ? std::string() : *it;
  };
  {
    Scratch s;
    captured(s, "dynamo");
    const auto cause = triton_cause(prove_kinds(s, recompile, {CacheKind::triton, CacheKind::dynamo}));
    EXPECT_NE(cause.find("kernel k: k.json"), std::string::npos) << cause;
    EXPECT_EQ(cause.find("inductor kind"), std::string::npos) << cause;
    EXPECT_EQ(cause.find("--capture-root"), std::string::npos) << cause;
  }
  {
    Scratch s;
    captured(s, "inductor");
    const auto cause = triton_cause(prove_kinds(s, recompile, {CacheKind::triton, CacheKind::inductor}));
    EXPECT_NE(cause.find("torch.compile's inductor kind"), std::string::npos) << cause;
  }
}

// The proof reads every captured Triton entry's metadata for its kernel names
// (the evidence of a miss); done while the copies were watched, it counted as
// the application reusing entries it never opened: 18-32 Triton files more
// than the same run under exec --audit on an H200. One entry read, one not.
TEST(HitProof, TheBuildersOwnReadsAreNotReuse)
{
  Scratch s;
  write(s.dir / "captured/triton/KEYA/k.json", R"({"name": "k", "hash": "KEYA"})");
  write(s.dir / "captured/triton/KEYB/other.json", R"({"name": "other", "hash": "KEYB"})");
  const auto proof = prove(s, "cat \"$TRITON_CACHE_DIR\"/KEYA/k.json > /dev/null", {}, CacheKind::triton);
  EXPECT_TRUE(proof.hit()) << proof.line();
  EXPECT_EQ(proof.line(), "triton: 1 reused, 0 new");
}

TEST(HitProof, ATritonMetadataFieldIsTheEvidence)
{
  Scratch s;
  write(s.dir / "captured/triton/KEYA/k.json", R"({"name": "k", "hash": "KEYA", "num_warps": 4})");
  write(s.dir / "captured/triton/KEYA/k.cubin", "ELF");
  const auto proof = prove(s,
                           "mkdir -p \"$TRITON_CACHE_DIR\"/KEYB && echo ELF > \"$TRITON_CACHE_DIR\"/KEYB/k.cubin && "
                           "echo '{\"name\": \"k\", \"hash\": \"KEYB\", \"num_warps\": 8}' > "
                           "\"$TRITON_CACHE_DIR\"/KEYB/k.json",
                           {}, CacheKind::triton);
  EXPECT_FALSE(proof.hit());
  ASSERT_FALSE(proof.causes.empty());
  EXPECT_NE(proof.causes[0].find("kernel k: k.json: \"num_warps\" was \"4\", is \"8\""), std::string::npos)
    << proof.causes[0];
}

// A tuned kernel lies in the capture in several configurations. The kernel
// compiled again in one of them is compared with the captured entry of that
// configuration, not with another (H200, max-autotune: the proof said
// "num_warps was 8, is 4" while the capture held the 4-warp configuration
// under another key, compiled by another ptxas: its .ptx's .version).
TEST(HitProof, ATunedKernelIsComparedWithItsOwnConfiguration)
{
  Scratch s;
  const auto entry = [](const std::string& key, int warps, const std::string& version) {
    return std::pair{triton_metadata(key, warps), "//\n.version " + version + "\n.target sm_90a\n"};
  };
  for (const auto& [key, warps, version] :
       std::vector<std::tuple<std::string, int, std::string>>{{"KEYA", 8, "9.0"}, {"KEYC", 4, "8.7"}}) {
    const auto [json, ptx] = entry(key, warps, version);
    write(s.dir / "captured/triton" / key / "k.json", json);
    write(s.dir / "captured/triton" / key / "k.ptx", ptx);
  }
  const auto [json, ptx] = entry("KEYB", 4, "9.0");
  write(s.dir / "new.json", json);
  write(s.dir / "new.ptx", ptx);
  const auto proof = prove(s,
                           "mkdir -p \"$TRITON_CACHE_DIR\"/KEYB && cp " + (s.dir / "new.json").string() +
                             " \"$TRITON_CACHE_DIR\"/KEYB/k.json && cp " + (s.dir / "new.ptx").string() +
                             " \"$TRITON_CACHE_DIR\"/KEYB/k.ptx",
                           {}, CacheKind::triton);
  EXPECT_FALSE(proof.hit());
  ASSERT_FALSE(proof.causes.empty());
  EXPECT_NE(proof.causes[0].find("kernel k: k.ptx line 2: was \".version 8.7\", is \".version 9.0\""),
            std::string::npos)
    << proof.causes[0];
  EXPECT_NE(proof.causes[0].find("another ptxas compiled it"), std::string::npos) << proof.causes[0];
  EXPECT_NE(proof.causes[0].find("TRITON_PTXAS_PATH"), std::string::npos) << proof.causes[0];
}

TEST(HitProof, APathInsideABinaryIsNoEvidence)
{
  Scratch s;
  const std::string build_path = "/build/staging/pocl-path-in-binary";
  write(s.dir / "captured/pocl/ab/cdef/program.so", std::string("\x7f" "ELF\0\0", 6) + "/tmp/" + build_path);
  const auto proof = prove(s, "mkdir -p \"$POCL_CACHE_DIR\"/ef/0123 && echo x > \"$POCL_CACHE_DIR\"/ef/0123/program.bc",
                           {build_path});
  EXPECT_FALSE(proof.hit());
  ASSERT_EQ(proof.causes.size(), 1u);
  EXPECT_EQ(proof.causes[0], "pocl: cause unknown (1 new files, e.g. \"ef/0123/program.bc\")");
}

TEST(HitProof, ACacheOutsideTheKindsIsNamed)
{
  Scratch s;
  write(s.dir / "captured/pocl/ab/cdef/program.bc", "bc");
  const auto proof = prove(s, "cat \"$POCL_CACHE_DIR\"/ab/cdef/program.bc >/dev/null && mkdir -p "
                              "\"$XDG_CACHE_HOME\"/hashcat/kernels && echo k > \"$XDG_CACHE_HOME\"/hashcat/kernels/m0.kernel");
  EXPECT_TRUE(proof.hit()) << "the captured kind hit";
  ASSERT_EQ(proof.uncaptured.size(), 1u);
  EXPECT_NE(proof.uncaptured[0].find("$XDG_CACHE_HOME/hashcat (1 files"), std::string::npos) << proof.uncaptured[0];
}

// OpenVINO 2026.4.1 writes ~/intel/openvino_telemetry on every import: no
// compiled code, so not "a cache no selected kind captures" (app_hint.hpp).
TEST(HitProof, TelemetryUnderHomeIsNotAnUncapturedCache)
{
  Scratch s;
  write(s.dir / "captured/pocl/ab/cdef/program.bc", "bc");
  const auto proof = prove(s, "cat \"$POCL_CACHE_DIR\"/ab/cdef/program.bc >/dev/null && mkdir -p "
                              "\"$HOME\"/intel/openvino_telemetry && echo id > \"$HOME\"/intel/openvino_telemetry/cid && "
                              "mkdir -p \"$HOME\"/.ov_like && echo k > \"$HOME\"/.ov_like/blob");
  EXPECT_TRUE(proof.hit());
  ASSERT_EQ(proof.uncaptured.size(), 1u) << "the other directory is still named";
  EXPECT_NE(proof.uncaptured[0].find("~/.ov_like (1 files"), std::string::npos) << proof.uncaptured[0];
}

TEST(HitProof, ABuildPathInsideTheCaptureIsACause)
{
  Scratch s;
  const std::string build_path = "/build/staging/pocl-path-in-key";
  write(s.dir / "captured/pocl/ab/cdef/program.bc", "debug info: " + build_path);
  const auto proof = prove(s, "mkdir -p \"$POCL_CACHE_DIR\"/ef/0123 && echo x > \"$POCL_CACHE_DIR\"/ef/0123/program.bc",
                           {build_path});
  EXPECT_FALSE(proof.hit());
  bool named = false;
  for (const auto& cause : proof.causes) {
    named = named || cause.find("build-time path \"" + build_path + "\"") != std::string::npos;
  }
  EXPECT_TRUE(named) << (proof.causes.empty() ? "no causes" : proof.causes[0]);
}

TEST(HitProof, JaxKeysHoldingTheirPathAreNamedBesideTheEvidence)
{
  // JAX's cache key hashes <cache dir>/xla_gpu_per_fusion_autotune_cache_dir
  // (JAX 0.10.2 on the CPU here): every entry
  // misses at another path. The note goes only with a miss of that cache.
  audit::KindUsage missed;
  missed.kind = "custom/jax";
  missed.files_before = 39;
  missed.reused_files = 0;
  missed.new_files = 39;
  missed.new_file_paths = {"jit_mlp-1336a7-cache"};
  audit::UsageReport usage;
  usage.kinds = {missed};
  const std::vector<CustomCacheRequest> jax = {{"jax", "JAX_COMPILATION_CACHE_DIR", {}}};
  auto causes = diagnose_misses(usage, {}, {}, jax);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].find("cause unknown"), std::string::npos) << "a known case is not also said as unknown";
  EXPECT_NE(causes[0].find("likely a known case"), std::string::npos) << causes[0];
  EXPECT_NE(causes[0].find("--capture-root"), std::string::npos) << causes[0];
  EXPECT_NE(causes[0].find("JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=none"), std::string::npos) << causes[0];

  const std::vector<CustomCacheRequest> other = {{"jax", "CUPY_CACHE_DIR", {}}};
  causes = diagnose_misses(usage, {}, {}, other);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].find("JAX"), std::string::npos) << "another cache gets no JAX note: " << causes[0];

  usage.kinds[0].reused_files = 39;
  usage.kinds[0].new_files = 0;
  usage.kinds[0].new_file_paths.clear();
  EXPECT_TRUE(diagnose_misses(usage, {}, {}, jax).empty()) << "a hit gets no cause";
}

TEST(HitProof, AProgramThatIgnoresTheCacheIsSaidSo)
{
  Scratch s;
  write(s.dir / "captured/pocl/ab/cdef/program.bc", "bc");
  const auto proof = prove(s, "true");
  EXPECT_TRUE(proof.hit()) << "untouched is no miss";
  EXPECT_EQ(proof.line(), "pocl: untouched (1 files, none read or changed)");
  ASSERT_EQ(proof.causes.size(), 1u);
  EXPECT_NE(proof.causes[0].find("read none of the 1 captured files"), std::string::npos) << proof.causes[0];
  EXPECT_NE(proof.causes[0].find("POCL_CACHE_DIR"), std::string::npos);
}

TEST(HitProof, AFailedRerunIsNoHit)
{
  Scratch s;
  write(s.dir / "captured/pocl/ab/cdef/program.bc", "bc");
  const auto proof = prove(s, "cat \"$POCL_CACHE_DIR\"/ab/cdef/program.bc > /dev/null; exit 3");
  EXPECT_FALSE(proof.run.succeeded());
  EXPECT_FALSE(proof.hit());
}

TEST(HitProof, VerifyModesRoundTrip)
{
  for (const auto mode : {VerifyMode::off, VerifyMode::warn, VerifyMode::require}) {
    EXPECT_EQ(parse_verify_mode(to_string(mode)), mode);
  }
  EXPECT_FALSE(parse_verify_mode("strict").has_value());
}
