// SPDX-License-Identifier: Apache-2.0
// The half-compute variants (-DPRECISION_FP16 -DCOMPUTE_HALF) only build on
// devices with cl_khr_fp16, which neither PoCL's CPU device nor NVIDIA's OpenCL
// offers, so the device tests never compile them. Here clang's OpenCL front end
// (SPIR target, cl_khr_fp16 on) checks every variant of every op kernel, as
// embedded in the binary (the engine's gemm/softmax/rmsnorm too, since Linear
// runs gemm.cl), and every file's bf16 variant with the extension off.
// Skips when no clang is installed.
#include "engine/kernel_sources.hpp"
#include "base/files.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace prewarm::engine::ops {
namespace {

std::string
find_clang()
{
  for (const char* candidate : {"clang-14", "clang", "clang-15", "clang-16"}) {
    const std::string probe = std::string("command -v ") + candidate + " >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) {
      return candidate;
    }
  }
  return {};
}

struct Variant
{
  std::string file;
  std::string defines;
};

std::vector<Variant>
variants()
{
  const std::string half = "-DPRECISION_FP16 -DCOMPUTE_HALF";
  std::vector<Variant> out;
  for (const char* file : {"attention.cl", "conv.cl", "elementwise.cl", "embedding.cl", "gemv.cl", "gptq.cl",
                           "layernorm.cl", "rope.cl", "w8a8.cl"}) {
    out.push_back({file, half});
  }
  out.push_back({"embedding.cl", half + " -DEMBEDDING_INT8"});
  out.push_back({"conv.cl", half + " -DFUSE_RELU -DKERNEL_SIZE=1"});
  out.push_back({"attention.cl", half + " -DHEAD_DIM=128 -DBLOCK_Q=8 -DBLOCK_KV=32 -DDECODE_LOCAL=64"});
  // The engine's kernels follow the same precision convention; Linear uses gemm.cl.
  for (const char* file : {"gemm.cl", "softmax.cl", "rmsnorm.cl"}) {
    out.push_back({file, half});
  }
  out.push_back({"gemm.cl", half + " -DTRANSPOSE_B=0"});
  return out;
}

enum class Fp16Extension { on, off };

// Checks every variant with clang's OpenCL front end; "" when all compile,
// else each failure with its log.
std::string
syntax_errors(const std::string& clang, const std::vector<Variant>& variants, Fp16Extension fp16)
{
  auto dir = TempDir::create("prewarm-ops-syntax-");
  if (!dir) {
    return dir.error().message();
  }
  std::string errors;
  for (const Variant& v : variants) {
    const auto source = find_embedded(kernels::embedded_files(), v.file);
    if (!source) {
      errors += v.file + " is not embedded\n";
      continue;
    }
    const auto path = dir->path() / v.file;
    std::ofstream(path, std::ios::binary) << *source;
    const auto log = dir->path() / "clang.log";
    const std::string command = clang + " -x cl -cl-std=CL1.2 --target=spir64 -Xclang -finclude-default-header" +
                                " -Xclang -cl-ext=" + (fp16 == Fp16Extension::on ? "+" : "-") + "cl_khr_fp16" +
                                " -fsyntax-only -Werror " + v.defines + " " + path.string() + " >" + log.string() +
                                " 2>&1";
    if (std::system(command.c_str()) != 0) {
      std::stringstream text;
      text << std::ifstream(log).rdbuf();
      errors += v.file + " " + v.defines + ":\n" + text.str();
    }
  }
  return errors;
}

TEST(KernelSyntax, HalfComputeVariantsCompileWithClangOpenCL)
{
  const std::string clang = find_clang();
  if (clang.empty()) {
    GTEST_SKIP() << "no clang to check the cl_khr_fp16 variants (apt-get install clang)";
  }
  EXPECT_EQ(syntax_errors(clang, variants(), Fp16Extension::on), "");
}

// bf16 needs no extension: every kernel file's bf16 variant compiles, warning
// free, for a device without cl_khr_fp16 (the PoCL tests build only the
// variants the ops use).
TEST(KernelSyntax, Bf16VariantsCompileWithoutAnyExtension)
{
  const std::string clang = find_clang();
  if (clang.empty()) {
    GTEST_SKIP() << "no clang";
  }
  std::vector<Variant> bf16;
  for (const auto& entry : kernels::embedded_files()) {
    bf16.push_back({std::string(entry.name), "-DPRECISION_BF16"});
  }
  bf16.push_back({"embedding.cl", "-DPRECISION_BF16 -DEMBEDDING_INT8"});
  ASSERT_GE(bf16.size(), 12u);
  EXPECT_EQ(syntax_errors(clang, bf16, Fp16Extension::off), "");
}

TEST(KernelSyntax, TheCheckRejectsHalfArithmeticWithoutTheExtension)
{
  const std::string clang = find_clang();
  if (clang.empty()) {
    GTEST_SKIP() << "no clang";
  }
  auto dir = TempDir::create("prewarm-ops-syntax-");
  ASSERT_TRUE(dir) << dir.error().message();
  // COMPUTE_HALF's pragma is what makes half arithmetic legal; without the
  // extension the same front end refuses it, so the test above is not vacuous.
  const auto path = dir->path() / "no_fp16.cl";
  std::ofstream(path) << "__kernel void k(__global half* p) { half x = p[0]; p[0] = x * x; }\n";
  const std::string command = clang + " -x cl -cl-std=CL1.2 --target=spir64 -Xclang -finclude-default-header" +
                              " -Xclang -cl-ext=-cl_khr_fp16 -fsyntax-only " + path.string() + " >/dev/null 2>&1";
  EXPECT_NE(std::system(command.c_str()), 0);
}

} // namespace
} // namespace prewarm::engine::ops
