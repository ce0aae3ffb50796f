// SPDX-License-Identifier: Apache-2.0
#include "layer/next_dispatch.hpp"

#include <atomic>

namespace prewarm::layer {
namespace {

std::atomic<const cl_icd_dispatch*> g_next{nullptr};

} // namespace

const cl_icd_dispatch&
next()
{
  return *g_next.load(std::memory_order_acquire);
}

void
set_next(const cl_icd_dispatch* dispatch)
{
  g_next.store(dispatch, std::memory_order_release);
}

} // namespace prewarm::layer
