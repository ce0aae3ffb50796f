// SPDX-License-Identifier: Apache-2.0
#include "engine/models/forward_check.hpp"

#include <algorithm>

namespace prewarm::engine::models {

// The ops' tolerances and comparisons.
using namespace ops;

Status
ForwardChecker::check(std::string_view what, std::span<const float> got, std::span<const float> want,
                      Tolerance tolerance)
{
  PW_TRY(check_close(what, got, want, tolerance));
  const Comparison c = compare(got, want, tolerance);
  ++m_summary.checks;
  m_summary.elements += c.count;
  m_summary.max_abs_error = std::max(m_summary.max_abs_error, c.max_abs_error);
  m_summary.max_rel_error = std::max(m_summary.max_rel_error, c.max_rel_error);
  return {};
}

} // namespace prewarm::engine::models
