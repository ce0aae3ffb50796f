// SPDX-License-Identifier: Apache-2.0
#include "command/command_job.hpp"

#include "base/files.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace prewarm::command {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool
any_contains(const std::vector<std::string>& lines, std::string_view needle)
{
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

struct JobDirs
{
  TempDir root;
  fs::path work;
};

JobDirs
make_dirs()
{
  auto root = TempDir::create("test_only_job-");
  EXPECT_TRUE(root);
  auto work = root->path() / "work";
  fs::create_directory(work);
  return JobDirs{std::move(*root), work};
}

std::vector<DeviceProperties>
fake_pocl()
{
  return {{{"vendor", "cpu"},
           {"opencl.platform", "Portable Computing Language"},
           {"opencl.platform-version", "OpenCL 3.0 PoCL test_only"},
           {"opencl.device", "test_only-cpu"},
           {"opencl.driver", "3.1"}}};
}

TEST(CommandJob, ExpandTemplateReplacesOnlyThePrecisionPlaceholder)
{
  EXPECT_EQ(expand_template("--precision={precision}", "fp16"), "--precision=fp16");
  EXPECT_EQ(expand_template("{precision}/{precision}", "int8"), "int8/int8");
  EXPECT_EQ(expand_template("print({'a': 1}) {prec}", "fp32"), "print({'a': 1}) {prec}");
}

TEST(CommandJob, CapturesWhatTheProgramWritesThroughTheVariables)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "cpu/test_only/fp16";
  request.precision = "fp16";
  request.work_dir = dirs.work;
  request.list_opencl_devices = fake_pocl;
  request.workload.argv = {"sh", "-c",
                           "mkdir -p \"$POCL_CACHE_DIR/AB/CDEF/k\" && printf %s \"$1-$MODE\" > "
                           "\"$POCL_CACHE_DIR/AB/CDEF/program.bc\" && touch \"$POCL_CACHE_DIR/tempfile_x\" && pwd",
                           "sh", "{precision}"};
  request.workload.environment = {{"MODE", "m-{precision}"}};
  request.workload.working_directory = dirs.root.path();
  request.workload.kinds = {CacheKind::pocl};

  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(result->succeeded()) << result->report();
  EXPECT_EQ(result->argv.back(), "fp16");
  const auto captured = result->staging_root / "pocl" / "AB" / "CDEF" / "program.bc";
  EXPECT_EQ(*read_file(captured), "fp16-m-fp16");
  EXPECT_FALSE(fs::exists(result->staging_root / "pocl" / "tempfile_x"));
  EXPECT_NE(result->run.output_tail.find(fs::canonical(dirs.root.path()).string()), std::string::npos);
  ASSERT_EQ(result->capture.kinds.size(), 1u);
  EXPECT_EQ(result->capture.kinds[0].files, 1u);
  EXPECT_EQ(result->capture.kinds[0].bytes, 11u);
  EXPECT_EQ(result->capture.kinds[0].bookkeeping_removed, 1u);
  ASSERT_EQ(result->identities.size(), 1u);
  const auto groups = result->slice_groups();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].kinds, std::vector<CacheKind>{CacheKind::pocl});
  EXPECT_EQ(groups[0].requirements.size(), 4u);
  EXPECT_EQ(result->job_line().substr(0, 28), "command cpu/test_only/fp16: ");
  const auto report = result->report();
  EXPECT_NE(report.find("pocl"), std::string::npos);
  EXPECT_NE(report.find("opencl.device == test_only-cpu"), std::string::npos);
  EXPECT_TRUE(fs::exists(result->log_file));
}

TEST(CommandJob, AFailedProgramLeavesNothingToPackageAndReportsItsOutput)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "cpu/test_only/fp32";
  request.precision = "fp32";
  request.work_dir = dirs.work;
  request.workload.argv = {"sh", "-c",
                           "touch \"$POCL_CACHE_DIR/half\"; echo 'Traceback: test_only failure' >&2; exit 2"};
  request.workload.kinds = {CacheKind::pocl};
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_FALSE(result->succeeded());
  EXPECT_FALSE(fs::exists(result->staging_root));
  EXPECT_TRUE(result->identities.empty());
  const auto report = result->report();
  EXPECT_NE(report.find("exited with status 2"), std::string::npos);
  EXPECT_NE(report.find("| Traceback: test_only failure"), std::string::npos);
  EXPECT_NE(report.find("nothing of this job is packaged"), std::string::npos);
}

TEST(CommandJob, TimeoutFailsTheJob)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "cpu/test_only/fp32";
  request.work_dir = dirs.work;
  request.workload.argv = {"sleep", "30"};
  request.workload.timeout = 1s;
  request.workload.kinds = {CacheKind::pocl};
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_FALSE(result->succeeded());
  EXPECT_EQ(result->run.ending, SubprocessResult::Ending::timed_out);
  EXPECT_NE(result->report().find("timed out after 1.0 s"), std::string::npos);
}

TEST(CommandJob, ProgramThatCannotStartIsAnError)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "cpu/test_only/fp32";
  request.work_dir = dirs.work;
  request.workload.argv = {"test_only_no_such_program"};
  auto result = run_command_job(request);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("job cpu/test_only/fp32"), std::string::npos);
  EXPECT_NE(result.error().message().find("test_only_no_such_program"), std::string::npos);
}

TEST(CommandJob, ShellCommandMustBeOneString)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "j";
  request.work_dir = dirs.work;
  request.workload.argv = {"echo", "a"};
  request.workload.shell = ShellMode::via_shell;
  auto result = run_command_job(request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().category(), Errc::usage);
}

TEST(CommandJob, EmptyCaptureIsAWarningNotAFailure)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "j";
  request.work_dir = dirs.work;
  request.workload.argv = {"true"};
  auto result = run_command_job(request); // all known kinds
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_TRUE(result->succeeded());
  EXPECT_TRUE(result->identities.empty());
  EXPECT_TRUE(result->slice_groups().empty());
  EXPECT_TRUE(any_contains(result->warnings, "filled none of the caches expected (programs, pocl, cuda, neo, "
                                             "sycl, triton, inductor)"));
}

TEST(CommandJob, PythonWorkloadsGetFrameworkRequirementsInSeparateSlices)
{
  auto dirs = make_dirs();
  const auto site = dirs.root.path() / "site";
  // Stand-in distributions: the framework probe reads their metadata.
  for (const auto& [name, version] : {std::pair{"torch", "2.11.0+test_only"}, std::pair{"triton", "3.6.0"}}) {
    const auto dist_info = site / fmt::format("{}-{}.dist-info", name, version);
    fs::create_directories(dist_info);
    ASSERT_TRUE(write_file_atomic(dist_info / "METADATA",
                                  fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version)));
  }
  CommandJobRequest request;
  request.job_id = "h100/test_only/fp32";
  request.work_dir = dirs.work;
  request.list_nvidia_gpus = [] {
    return std::vector<DeviceProperties>{
      {{"vendor", "nvidia"}, {"nvidia.driver", "580.95.05"}, {"nvidia.sm", "90"}}};
  };
  request.workload.argv = {"/usr/bin/python3", "-c",
                           "import os\n"
                           "for v in ('TRITON_CACHE_DIR', 'CUDA_CACHE_PATH'):\n"
                           "    d = os.path.join(os.environ[v], 'K')\n"
                           "    os.makedirs(d)\n"
                           "    open(os.path.join(d, 'entry'), 'w').write(v)\n"};
  request.workload.environment = {{"PYTHONPATH", site.string()}};
  request.workload.kinds = {CacheKind::triton, CacheKind::cuda};
  request.frameworks = FrameworkRequirements::required;
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(result->succeeded()) << result->report();
  EXPECT_EQ(result->frameworks.at("framework.torch"), "2.11.0+test_only");
  const auto groups = result->slice_groups();
  ASSERT_EQ(groups.size(), 2u);
  const auto& cuda = groups[0].kinds.front() == CacheKind::cuda ? groups[0] : groups[1];
  const auto& triton = groups[0].kinds.front() == CacheKind::cuda ? groups[1] : groups[0];
  EXPECT_EQ(cuda.requirements,
            (std::vector<bundle::Requirement>{{"nvidia.driver", "==", "580.95.05"}, {"nvidia.sm", "==", "90"}}));
  EXPECT_EQ(triton.requirements, (std::vector<bundle::Requirement>{{"framework.torch", "==", "2.11.0+test_only"},
                                                                   {"framework.triton", "==", "3.6.0"},
                                                                   {"nvidia.sm", "==", "90"}}));

  // `recorded`: the versions go into the job line, not the requirements.
  auto dirs2 = make_dirs();
  request.work_dir = dirs2.work;
  request.frameworks = FrameworkRequirements::recorded;
  auto recorded = run_command_job(request);
  ASSERT_TRUE(recorded) << recorded.error().message();
  ASSERT_TRUE(recorded->succeeded()) << recorded->report();
  for (const auto& group : recorded->slice_groups()) {
    for (const auto& r : group.requirements) {
      EXPECT_FALSE(r.key.starts_with("framework.")) << r.key;
    }
  }
  EXPECT_NE(recorded->job_line().find("command h100/test_only/fp32 [torch 2.11.0+test_only, triton 3.6.0]: "),
            std::string::npos)
    << recorded->job_line();
}

// A stand-in for Triton's FileCacheManager (python/triton/runtime/cache.py,
// 3.x): put() files under $TRITON_CACHE_DIR/<key>/, put_group() records
// their ABSOLUTE paths, get_group() hits only if every one exists. And a
// custom cache "abs" that keys nothing but checks an absolute path it
// recorded, which no installer relocates.
constexpr std::string_view k_absolute_path_caches = R"(
import json, os
key = os.path.join(os.environ["TRITON_CACHE_DIR"], "KEY0123")
group = os.path.join(key, "__grp__k.json")
def get_group():
    if not os.path.exists(group):
        return None
    paths = json.load(open(group))["child_paths"]
    return paths if all(os.path.exists(p) for p in paths.values()) else None
found = get_group()
if found is None:
    os.makedirs(key, exist_ok=True)
    paths = {}
    for name in ("k.cubin", "k.json"):
        paths[name] = os.path.join(key, name)
        open(paths[name], "w").write("compiled " + name)
    open(group, "w").write(json.dumps({"child_paths": paths}))
else:
    for p in found.values():
        open(p).read()
where = os.path.join(os.environ["ABS_CACHE_DIR"], "where")
if os.path.exists(where) and os.path.exists(open(where).read()):
    open(open(where).read()).read()
else:
    blob = os.path.join(os.environ["ABS_CACHE_DIR"], "blob")
    open(blob, "w").write("compiled")
    open(where, "w").write(blob)
)";

TEST(CommandJob, TheHitProofCannotReachTheCaptureAndRelocatesTritonGroups)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "cpu/test_only_paths/fp32";
  request.work_dir = dirs.work;
  request.workload.argv = {"/usr/bin/python3", "-c", std::string(k_absolute_path_caches)};
  request.workload.kinds = {CacheKind::triton};
  request.workload.custom_caches = {CustomCacheRequest{"abs", "ABS_CACHE_DIR", {}}};
  request.frameworks = FrameworkRequirements::recorded;
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(result->succeeded()) << result->report();
  ASSERT_TRUE(result->hit_proof.has_value());
  const auto& proof = *result->hit_proof;
  // Triton's groups are relocated onto the proof's copy, as the installer
  // relocates them onto ROOT/triton: every kernel file is read, none new.
  const auto* triton = proof.usage.find("triton");
  ASSERT_NE(triton, nullptr) << proof.line();
  EXPECT_EQ(triton->new_files, 0u) << proof.line();
  EXPECT_EQ(triton->reused_files, 3u) << proof.line();
  // The absolute path the custom cache recorded leads into the capture,
  // which the proof cannot reach: a miss, as on any install elsewhere.
  const auto* custom = proof.usage.find("custom/abs");
  ASSERT_NE(custom, nullptr) << proof.line();
  EXPECT_GT(custom->new_files, 0u) << "the original capture was reachable during the proof: " << proof.line();
  // The capture is back where it was, untouched, for packing.
  const auto group = read_file(result->staging_root / "triton/KEY0123/__grp__k.json");
  ASSERT_TRUE(group) << group.error().describe();
  EXPECT_NE(group->find((result->staging_root / "triton/KEY0123/k.cubin").string()), std::string::npos)
    << "the signed bytes are the captured ones; the runtime relocates after verifying them";
  EXPECT_FALSE(fs::exists(dirs.work / ".capture-hidden-during-proof"));
  EXPECT_NE(result->report().find(" s)\n"), std::string::npos) << "the proof's own time: " << result->report();
}

// Inductor's autotune cache as seen on an H100 (torch 2.11): the cached
// output code keeps each kernel's source path, and every process writes the
// winning config beside it (codecache.write_atomic creates the directories).
// Here the path is recorded in a file of the cache; the second run writes at
// the capture's own path, which the proof hid.
constexpr std::string_view k_writes_at_recorded_path = R"(
import os
cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
recorded = os.path.join(cache, "ab", "kernel.path")
if os.path.exists(recorded):
    source = open(recorded).read()
    os.makedirs(os.path.dirname(source), exist_ok=True)
    open(os.path.splitext(source)[0] + ".best_config", "w").write("{}")
else:
    os.makedirs(os.path.join(cache, "ab"))
    source = os.path.join(cache, "ab", "kernel.py")
    open(source, "w").write("kernel")
    open(recorded, "w").write(source)
)";

TEST(CommandJob, AWriteAtTheCapturesPathDuringTheProofIsAVerdictNamingFilesKindAndFix)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "cpu/test_only_autotune/fp32";
  request.work_dir = dirs.work;
  request.workload.argv = {"/usr/bin/python3", "-c", std::string(k_writes_at_recorded_path)};
  request.workload.kinds = {CacheKind::inductor};
  request.workload.verify = VerifyMode::require;
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << "a write at the capture's path is a verdict, not an error: " << result.error().message();
  ASSERT_TRUE(result->succeeded()) << result->report();
  ASSERT_TRUE(result->hit_proof.has_value());
  const auto& proof = *result->hit_proof;
  EXPECT_FALSE(proof.hit()) << proof.line();
  ASSERT_EQ(proof.written_into_capture.size(), 1u);
  EXPECT_EQ(proof.written_into_capture[0].kind, "inductor");
  const auto written = (result->staging_root / "inductor/ab/kernel.best_config").string();
  EXPECT_EQ(proof.written_into_capture[0].files, std::vector<std::string>{written});
  const auto failure = result->required_proof_failure();
  ASSERT_TRUE(failure.has_value()) << "verify: require fails the job";
  EXPECT_NE(failure->find("missed: inductor: wrote 1 file at the capture's path"), std::string::npos) << *failure;
  EXPECT_NE(failure->find(written), std::string::npos) << *failure;
  EXPECT_NE(failure->find("--capture-root"), std::string::npos) << *failure;
  // The capture is back as it was captured, without the run's write.
  EXPECT_TRUE(fs::exists(result->staging_root / "inductor/ab/kernel.py"));
  EXPECT_FALSE(fs::exists(written));
  EXPECT_FALSE(fs::exists(dirs.work / ".capture-hidden-during-proof"));
}

TEST(CommandJob, LinksAndPrintableNamesAreCapturedAndProven)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "cpu/test_only_names/fp32";
  request.work_dir = dirs.work;
  // clFFT names a directory after the device; darktable finds each
  // program's binary through a relative link. The second run reads through
  // the link and the names, and writes nothing.
  request.workload.argv = {"sh", "-c",
                           "d=\"$APP_CACHE/pthread-skylake-avx512-AMD EPYC\"; "
                           "if [ -L \"$APP_CACHE/blur.cl.bin\" ]; then cat \"$APP_CACHE/blur.cl.bin\" \"$d/fft (1).bin\" "
                           "\"$APP_CACHE/caf\xc3\xa9\" >/dev/null; exit; fi; "
                           "mkdir -p \"$d\" && echo k > \"$d/fft (1).bin\" && echo u > \"$APP_CACHE/caf\xc3\xa9\" && "
                           "echo b > \"$APP_CACHE/0123abcd\" && ln -s 0123abcd \"$APP_CACHE/blur.cl.bin\""};
  request.workload.no_builtin_kinds = true;
  request.workload.custom_caches = {CustomCacheRequest{"app", "APP_CACHE", {}}};
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(result->succeeded()) << result->report();
  EXPECT_FALSE(result->packing_failure().has_value()) << *result->packing_failure();
  ASSERT_TRUE(result->hit_proof.has_value()) << result->report();
  EXPECT_TRUE(result->hit_proof->hit()) << result->hit_proof->line();
  // A read through the link is a read of its target: three files reused.
  EXPECT_EQ(result->hit_proof->line(), "custom/app: 3 reused, 0 new");
}

TEST(CommandJob, ACaptureNoSliceCanCarryFailsTheJobBeforeItsProof)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "cpu/test_only_names/fp32";
  request.work_dir = dirs.work;
  request.workload.argv = {"sh", "-c",
                           "echo b > \"$APP_CACHE/0123abcd\" && ln -s 0123abcd \"$APP_CACHE/blur.cl.bin\" && "
                           "ln -s /etc/passwd \"$APP_CACHE/outside\" && ln -s ../../x \"$APP_CACHE/escape\" && "
                           "printf x > \"$APP_CACHE/$(printf 'bad\\001name')\""};
  request.workload.kinds = {CacheKind::pocl};
  request.workload.custom_caches = {CustomCacheRequest{"app", "APP_CACHE", {}}};
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(result->succeeded()) << result->report();
  const auto failure = result->packing_failure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->find("custom cache app: \"outside\" is a symbolic link to \"/etc/passwd\" that no slice can carry: "
                          "absolute target"),
            std::string::npos)
    << *failure;
  EXPECT_NE(failure->find("custom cache app: \"escape\" is a symbolic link to \"../../x\" that no slice can carry: climbs out"),
            std::string::npos)
    << *failure;
  EXPECT_NE(failure->find("custom cache app: \"bad\\x01name\" has a name that is not 1..255 bytes of printable UTF-8"),
            std::string::npos)
    << *failure;
  EXPECT_EQ(failure->find("blur.cl.bin"), std::string::npos) << "a link inside the cache ships: " << *failure;
  EXPECT_FALSE(result->hit_proof.has_value()) << "no proof of what cannot ship";
}

TEST(CommandJob, OnlyCustomCachesWhenNoBuiltInKindIsSelected)
{
  auto dirs = make_dirs();
  CommandJobRequest request;
  request.job_id = "cpu/test_only_own_cache/fp32";
  request.work_dir = dirs.work;
  // JAX's persistent cache: its own files, read back on the second run.
  request.workload.argv = {"sh", "-c",
                           "if [ -f \"$OWN_CACHE/jit_f-abc\" ]; then cat \"$OWN_CACHE/jit_f-abc\" >/dev/null; "
                           "else echo exe > \"$OWN_CACHE/jit_f-abc\"; fi"};
  request.workload.no_builtin_kinds = true;
  request.workload.custom_caches = {CustomCacheRequest{"jax", "OWN_CACHE", {}}};
  auto result = run_command_job(request);
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(result->succeeded()) << result->report();
  EXPECT_TRUE(result->capture.kinds.empty()) << "no built-in kind was redirected or captured";
  ASSERT_TRUE(result->hit_proof.has_value());
  EXPECT_TRUE(result->hit_proof->hit()) << result->hit_proof->line();
  EXPECT_EQ(result->hit_proof->line(), "custom/jax: 1 reused, 0 new");
}

TEST(CommandJob, JobLineFitsTheBundleManifestText)
{
  CommandJobResult result;
  result.job_id = "cpu/x/fp32";
  result.argv = {"/usr/bin/python3", "-c", "import os\nprint(  1)\n", std::string(2000, 'a')};
  const auto line = result.job_line();
  EXPECT_LE(line.size(), 1024u);
  EXPECT_EQ(line.find("  "), std::string::npos);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.substr(line.size() - 3), "...");
  EXPECT_EQ(line.rfind("command cpu/x/fp32: /usr/bin/python3 -c 'import os print(", 0), 0u) << line;
}

} // namespace
} // namespace prewarm::command
