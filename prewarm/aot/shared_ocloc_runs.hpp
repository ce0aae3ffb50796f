// SPDX-License-Identifier: Apache-2.0
// One ocloc run per distinct input in a build. Jobs of one build ask ocloc
// for the same thing: two models of one architecture compile the same
// programs for a target (the AOT binaries and the card's NEO entries alike),
// and targets of one device (arc-a770, arc-a750: acm-g10) the same programs
// for that device. While a SharedOclocRuns is alive (`prewarm build` holds
// one around its jobs, like jobs::SharedSlots), Ocloc::compile,
// compile_spirv and validate run ocloc once per key and give every caller
// with that key the result; a caller that asks while the run is under way
// waits for it instead of running its own.
//
// The key is exactly what ocloc's output depends on: the executable and its
// driver version, the kind of run (binary, SPIR-V only, validate), the input
// kind and bytes, the build options, the internal options, the stateful
// address mode and the device (ocloc.hpp: the same source, options and device
// give the same bytes; the scratch directory's names are fixed and never
// reach the output). `source_name` is only for messages and is not part of
// the key: a shared failure names the program of the caller that ran it.
// Without a live SharedOclocRuns every call runs ocloc (tests, other
// commands), so the files a build writes are the same with or without it.
#pragma once

#include "aot/ocloc.hpp"
#include "base/error.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace prewarm::aot {

struct OclocRunCounts
{
  std::uint64_t asked = 0; // calls of compile, compile_spirv and validate
  std::uint64_t ran = 0;   // ocloc processes they started
};

// One at a time per process (constructing a second while one is alive is a
// programming error).
class SharedOclocRuns
{
public:
  SharedOclocRuns();
  ~SharedOclocRuns();
  SharedOclocRuns(const SharedOclocRuns&) = delete;
  SharedOclocRuns& operator=(const SharedOclocRuns&) = delete;
  // So far; thread-safe.
  OclocRunCounts counts() const;
};

// The runs behind Ocloc's calls (ocloc.cpp): `run` once per key while a
// SharedOclocRuns is alive, else every time.
Result<OclocOutput> shared_output_run(const std::string& key, const std::function<Result<OclocOutput>()>& run);
Result<OclocValidation> shared_validation_run(const std::string& key,
                                              const std::function<Result<OclocValidation>()>& run);

// The key of a run: the SHA-256 of its parts, each length-prefixed (no two
// different lists of parts give the same text).
std::string run_key(std::initializer_list<std::string_view> parts);

} // namespace prewarm::aot
