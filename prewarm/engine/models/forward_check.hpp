// SPDX-License-Identifier: Apache-2.0
// Checks a model's forward pass op by op: each op's device output is compared
// with its CPU reference computed from the op's device input, so rounding does
// not compound from layer to layer and the per-precision tolerances of
// tolerance.hpp apply unchanged. The first mismatch stops the run
// (E_OP_MISMATCH, naming the op); the summary feeds the workload report.
#pragma once

#include "base/error.hpp"
#include "engine/ops/tolerance.hpp"

#include <cstddef>
#include <span>
#include <string_view>

namespace prewarm::engine::models {

struct ForwardSummary
{
  std::size_t checks = 0;     // op outputs compared
  std::size_t elements = 0;   // elements compared in all
  double max_abs_error = 0;
  double max_rel_error = 0;
};

class ForwardChecker
{
public:
  Status check(std::string_view what, std::span<const float> got, std::span<const float> want,
               ops::Tolerance tolerance);
  const ForwardSummary& summary() const { return m_summary; }

private:
  ForwardSummary m_summary;
};

} // namespace prewarm::engine::models
