// SPDX-License-Identifier: Apache-2.0
// AOT compilation of the built-in workload's kernels with the REAL ocloc into
// the programs format, read back with the runtime's reader.
#include "aot/aot_compiler.hpp"

#include "base/digest.hpp"
#include "base/files.hpp"
#include "level_zero/aot_programs.hpp"
#include "manifest/presets.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files();
}

namespace prewarm::aot {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string>
tree(const fs::path& root)
{
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) {
      files[fs::relative(entry.path(), root).string()] = sha256_hex(*read_file(entry.path().string()));
    }
  }
  return files;
}

AotTargetSpec
arc_a380()
{
  return {"arc-a380", "acm-g11", "12.56.5", {"0x56a5"}};
}

class AotCompilerTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto ocloc = Ocloc::locate();
    if (!ocloc) {
      GTEST_SKIP() << "ocloc not usable: " << ocloc.error().message();
    }
    m_ocloc.emplace(std::move(*ocloc));
    auto dir = TempDir::create("test_only_aot-");
    ASSERT_TRUE(dir);
    m_dir.emplace(std::move(*dir));
  }
  std::optional<Ocloc> m_ocloc;
  std::optional<TempDir> m_dir;
};

// The default manifest's model (embedded preset), as the run path builds it.
Result<std::vector<KernelVariant>>
qwen_variants(model::Precision precision)
{
  PW_ASSIGN(auto presets, manifest::PresetLibrary::embedded());
  const auto* model = presets.find("qwen2.5-0.5b");
  if (model == nullptr) {
    return fail(Errc::internal, "preset qwen2.5-0.5b missing");
  }
  return workload_variants(*model, precision, model::Shapes{}, model::Coverage::representative);
}

TEST(KernelVariants, ComeFromTheEngineForEachPrecision)
{
  auto fp32 = qwen_variants(model::Precision::fp32);
  auto fp16 = qwen_variants(model::Precision::fp16);
  auto int8 = qwen_variants(model::Precision::int8);
  ASSERT_TRUE(fp32 && fp16 && int8) << (fp32 ? "" : fp32.error().message());
  bool gemm = false, fp16_defines = false, w8a8 = false;
  for (const auto& v : *fp32) {
    EXPECT_EQ(v.options.find("PRECISION_FP16"), std::string::npos) << v.options;
    gemm = gemm || v.source_name == "gemm.cl";
  }
  for (const auto& v : *fp16) {
    // Intel targets compute in half (cl_khr_fp16).
    fp16_defines = fp16_defines || v.options.find("-DCOMPUTE_HALF -DPRECISION_FP16") != std::string::npos;
  }
  for (const auto& v : *int8) {
    w8a8 = w8a8 || v.source_name == "w8a8.cl";
  }
  EXPECT_TRUE(gemm);
  EXPECT_TRUE(fp16_defines);
  EXPECT_TRUE(w8a8);
  EXPECT_TRUE(std::ranges::is_sorted(*fp32));
}

TEST(KernelVariants, Bf16HasAVariantForEveryFileFp16HasAndComputesInFloat)
{
  auto fp16 = qwen_variants(model::Precision::fp16);
  auto bf16 = qwen_variants(model::Precision::bf16);
  ASSERT_TRUE(fp16 && bf16) << (bf16 ? "" : bf16.error().message());
  std::set<std::string> fp16_files, bf16_files;
  for (const auto& v : *fp16) {
    fp16_files.insert(v.source_name);
  }
  for (const auto& v : *bf16) {
    bf16_files.insert(v.source_name);
    EXPECT_NE(v.options.find("-DPRECISION_BF16"), std::string::npos) << v.source_name << " " << v.options;
    // Not the Intel half-compute variant: bf16 has no arithmetic of its own.
    EXPECT_EQ(v.options.find("COMPUTE_HALF"), std::string::npos) << v.options;
    EXPECT_EQ(v.options.find("PRECISION_FP16"), std::string::npos) << v.options;
  }
  EXPECT_EQ(bf16_files, fp16_files);
  EXPECT_EQ(bf16->size(), fp16->size());

  // The CNN and GPTQ presets too (GPTQ refuses only int8).
  auto presets = manifest::PresetLibrary::embedded();
  ASSERT_TRUE(presets);
  for (const char* name : {"lprnet", "gptq-linear"}) {
    const auto* model = presets->find(name);
    ASSERT_NE(model, nullptr) << name;
    auto variants = workload_variants(*model, model::Precision::bf16, model::Shapes{}, model::Coverage::representative);
    ASSERT_TRUE(variants) << name << ": " << variants.error().message();
    for (const auto& v : *variants) {
      EXPECT_NE(v.options.find("-DPRECISION_BF16"), std::string::npos) << name << " " << v.options;
    }
  }
}

TEST(KernelVariants, EverySourceIsEmbedded)
{
  for (auto precision : model::k_precisions) {
    auto variants = qwen_variants(precision);
    ASSERT_TRUE(variants);
    for (const auto& v : *variants) {
      EXPECT_TRUE(find_embedded(kernels::embedded_files(), v.source_name)) << v.source_name;
    }
  }
}

TEST_F(AotCompilerTest, UnknownDeviceIsSkippedWithReasonAndHint)
{
  // arc-b580 = bmg: newer than Debian's ocloc 22.43. Never guessed.
  const AotTargetSpec b580{"arc-b580", "bmg", "", {"0xe20b"}};
  auto support = assess_target(*m_ocloc, b580);
  ASSERT_TRUE(support) << support.error().message();
  if (support->supported) {
    GTEST_SKIP() << "this ocloc (" << m_ocloc->driver_version() << ") knows bmg";
  }
  EXPECT_NE(support->reason.find("arc-b580"), std::string::npos) << support->reason;
  EXPECT_NE(support->reason.find("does not know 'bmg'"), std::string::npos) << support->reason;
  EXPECT_NE(support->reason.find("install a newer"), std::string::npos) << support->reason;

  auto variants = qwen_variants(model::Precision::fp32);
  auto report = compile_targets(*m_ocloc, std::span(&b580, 1), *variants, kernels::embedded_files(),
                                m_dir->path() / "programs", {});
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), "E_AOT_UNKNOWN_DEVICE");
  EXPECT_FALSE(fs::exists(m_dir->path() / "programs" / "aot")); // nothing written

  auto known = assess_target(*m_ocloc, arc_a380());
  ASSERT_TRUE(known);
  EXPECT_TRUE(known->supported) << known->reason;
  EXPECT_EQ(known->ip_version, "12.56.5");
}

TEST_F(AotCompilerTest, BuiltinVariantsCompileValidateAndReadBack)
{
  auto variants = qwen_variants(model::Precision::fp32);
  ASSERT_TRUE(variants);
  const auto programs_dir = m_dir->path() / "programs";
  AotCompileOptions options;
  options.jobs = 2;
  options.validation = Validation::validate; // every zebin through `ocloc validate`
  const auto spec = arc_a380();
  auto report = compile_targets(*m_ocloc, std::span(&spec, 1), *variants, kernels::embedded_files(), programs_dir,
                                options);
  ASSERT_TRUE(report) << report.error().message();
  ASSERT_EQ(report->targets.size(), 1u);
  EXPECT_EQ(report->compiles, variants->size());
  EXPECT_EQ(report->targets[0].programs.size(), variants->size());
  EXPECT_EQ(report->targets[0].compiler, m_ocloc->driver_version());
  EXPECT_GT(report->targets[0].zebin_bytes, 0u);

  auto programs = level_zero::AotPrograms::open(programs_dir);
  ASSERT_TRUE(programs) << programs.error().message();
  ASSERT_EQ(programs->targets().size(), 1u);
  const auto& target = programs->targets()[0];
  EXPECT_EQ(target.ocloc_device, "acm-g11");
  EXPECT_EQ(target.ip_version, "12.56.5");
  EXPECT_EQ(target.pci_ids, std::vector<std::string>{"0x56a5"});
  for (const auto& v : *variants) {
    auto source = find_embedded(kernels::embedded_files(), v.source_name);
    auto lookup = programs->find(target, *source, v.options);
    ASSERT_TRUE(lookup.program) << lookup.reason;
    // Independently re-validate what was stored.
    auto validation = m_ocloc->validate(lookup.program->zebin, "acm-g11");
    ASSERT_TRUE(validation);
    EXPECT_TRUE(validation->valid) << v.source_name << " " << v.options << "\n" << validation->output;
    EXPECT_FALSE(lookup.program->spirv.empty());
  }
}

TEST_F(AotCompilerTest, SameBytesAtAnyJobCount)
{
  auto variants = qwen_variants(model::Precision::fp32);
  ASSERT_TRUE(variants);
  variants->resize(3); // enough programs to interleave on 2 threads; keeps the test short
  const AotTargetSpec specs[] = {arc_a380(), {"iris-xe", "tgllp", "12.0.0", {"0x9a49", "0x9a40"}}};
  AotCompileOptions serial;
  serial.jobs = 1;
  serial.validation = Validation::skip;
  AotCompileOptions parallel = serial;
  parallel.jobs = 2;
  auto one = compile_targets(*m_ocloc, specs, *variants, kernels::embedded_files(), m_dir->path() / "one", serial);
  auto two = compile_targets(*m_ocloc, specs, *variants, kernels::embedded_files(), m_dir->path() / "two", parallel);
  ASSERT_TRUE(one && two);
  const auto a = tree(m_dir->path() / "one");
  const auto b = tree(m_dir->path() / "two");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 2 * (3 * variants->size() + 1)); // zebin+spv+meta per program, one record per target
  // Targets do not share binaries.
  EXPECT_NE(one->targets[0].zebin_bytes, one->targets[1].zebin_bytes);
}

} // namespace
} // namespace prewarm::aot
