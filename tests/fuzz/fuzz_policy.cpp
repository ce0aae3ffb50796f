// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the trust policy loader (trust_policy.hpp, yaml-cpp behind
// it). Invariants: no crash/UB, no exception escapes, every failure is a
// config error (Errc::usage). Relative key files resolve under a directory
// that does not exist, so the fuzzer reads no file.
#include "bundle/trust_policy.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto policy = prewarm::bundle::parse_trust_policy(bytes, "/nonexistent-prewarm-fuzz", "fuzz.yaml");
  if (!policy && policy.error().category() != prewarm::Errc::usage) {
    std::abort();
  }
  return 0;
}
