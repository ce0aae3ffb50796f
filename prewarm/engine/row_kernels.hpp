// SPDX-License-Identifier: Apache-2.0
// Host side of the row-wise reductions kernels/softmax.cl and
// kernels/rmsnorm.cl (one work-group of `work_group` items per row), with
// their CPU references.
#pragma once

#include "base/error.hpp"
#include "engine/defines.hpp"
#include "engine/session.hpp"

namespace prewarm::engine {

enum class CausalMask { none, causal };

struct SoftmaxArgs
{
  const DeviceBuffer* x = nullptr; // rows x cols, in place
  int rows = 0;
  int cols = 0;
  float scale = 1.0f;
  CausalMask mask = CausalMask::none;
  int period = 1; // causal: queries per block of rows; they are the last `period` of the cols
};

Status run_softmax(Session& session, const SoftmaxArgs& args, const Defines& precision = {}, int work_group = 64);
void reference_softmax(const SoftmaxArgs& args, float* x);

struct RmsNormArgs
{
  const DeviceBuffer* x = nullptr;
  const DeviceBuffer* weight = nullptr;
  const DeviceBuffer* out = nullptr;
  int rows = 0;
  int cols = 0;
  float eps = 1e-6f;
};

Status run_rmsnorm(Session& session, const RmsNormArgs& args, const Defines& precision = {}, int work_group = 64);
void reference_rmsnorm(const RmsNormArgs& args, const float* x, const float* weight, float* out);

} // namespace prewarm::engine
