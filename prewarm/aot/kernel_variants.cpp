// SPDX-License-Identifier: Apache-2.0
#include "aot/kernel_variants.hpp"

#include <algorithm>

namespace prewarm::aot {

std::string
render_options(const std::map<std::string, std::string>& defines)
{
  std::string options;
  for (const auto& [name, value] : defines) {
    if (!options.empty()) {
      options += ' ';
    }
    options += "-D" + name;
    if (!value.empty()) {
      options += "=" + value;
    }
  }
  return options;
}

Result<std::vector<KernelVariant>>
builtin_variants(engine::Precision precision)
{
  std::map<std::string, std::string> precision_defines;
  switch (precision) {
  case engine::Precision::fp32:
    break;
  case engine::Precision::fp16:
    precision_defines = {{"PRECISION_FP16", ""}, {"COMPUTE_HALF", ""}};
    break;
  case engine::Precision::int8:
    return fail(Errc::usage, "AOT: the built-in engine has no int8 kernels to compile yet (fp32, fp16)",
                "E_UNSUPPORTED_PRECISION");
  }
  auto with = [&](std::map<std::string, std::string> defines) {
    defines.insert(precision_defines.begin(), precision_defines.end());
    return render_options(defines);
  };
  std::vector<KernelVariant> variants = {
    {"gemm.cl", with({{"TILE", "16"}, {"TRANSPOSE_B", "0"}})},
    {"gemm.cl", with({{"TILE", "16"}, {"TRANSPOSE_B", "1"}})},
    {"softmax.cl", with({{"WG", "64"}})},
    {"rmsnorm.cl", with({{"WG", "64"}})},
    {"elementwise.cl", render_options({})}, // silu_mul: no precision variants in the engine yet
  };
  std::ranges::sort(variants);
  variants.erase(std::unique(variants.begin(), variants.end()), variants.end());
  return variants;
}

} // namespace prewarm::aot
