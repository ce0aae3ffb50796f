// SPDX-License-Identifier: Apache-2.0
// What a Session reports: the kernel variants it launched, timings, the
// program store's counters and, where AOT binaries exist, which path served
// each program. The Session fills the shared parts, its backend the rest.
#pragma once

#include "store/program_store.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace prewarm::engine {

struct SessionStats
{
  std::string backend; // "opencl", "level-zero"
  // Each distinct (source, kernel, defines, local size) launched, in first
  // launch order: "gemm.cl:gemm_tiled [-DTILE=16] local=16x16".
  std::vector<std::string> variants;
  std::uint64_t launches = 0;
  double compile_seconds = 0;  // program builds (source or binary) and kernel creation
  double execute_seconds = 0;  // enqueue + finish + blocking transfers. PoCL compiles
                               // per-local-size code at first enqueue: that lands here.
  store::StoreCounters store;  // hits, misses, rejected, captured (all zero without a store)
  // AOT serving, only when the program store directory holds AOT targets:
  // which path served each program, in build order,
  // "gemm.cl [-DTILE=16]: aot acm-g11 3f2a9c01b2d4" or "...: fallback: <reason>".
  std::vector<std::string> aot_programs;
  std::uint64_t aot_served = 0;
  std::uint64_t aot_fallbacks = 0;
  std::size_t peak_device_bytes = 0; // peak of bytes allocated through allocate()
};

} // namespace prewarm::engine
