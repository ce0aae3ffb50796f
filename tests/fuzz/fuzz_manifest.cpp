// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the manifest parser (bundle_manifest.hpp). Invariants: no
// crash/UB; anything parse() accepts re-serializes to exactly the same bytes
// (one canonical encoding) and validates.
#include "bundle/bundle_manifest.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto parsed = prewarm::bundle::parse(bytes);
  if (parsed) {
    if (prewarm::bundle::serialize(*parsed) != bytes || !prewarm::bundle::validate(*parsed)) {
      std::abort(); // a second encoding of one manifest: the signature would not pin the meaning
    }
  }
  return 0;
}
