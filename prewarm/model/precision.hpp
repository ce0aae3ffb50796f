// SPDX-License-Identifier: Apache-2.0
// The precisions a model runs at and their names: the one definition that
// manifests, job ids, the CLI and the engine's kernels share.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace prewarm::model {

// bf16 stores the upper half of a float (8-bit significand, float's exponent
// range) and always computes in float, on any device: no OpenCL extension.
enum class Precision { fp32, fp16, bf16, int8 };

// Every precision, in the order messages and help list them.
inline constexpr std::array k_precisions{Precision::fp32, Precision::fp16, Precision::bf16, Precision::int8};

// The names in manifests, job ids, `{precision}` and --precision: "fp32", "fp16", "bf16", "int8".
std::string_view to_string(Precision precision);
std::optional<Precision> parse_precision(std::string_view name);
// "fp32, fp16, bf16, int8": what an error about an unknown precision lists.
std::string precision_names();

} // namespace prewarm::model
