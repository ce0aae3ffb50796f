// SPDX-License-Identifier: Apache-2.0
// The embedded registry and presets, loaded once for the manifest tests.
#pragma once

#include "manifest/manifest.hpp"

#include <gtest/gtest.h>

#include <string>

namespace prewarm::manifest::testing {

inline const TargetRegistry&
registry()
{
  static const TargetRegistry r = [] {
    auto loaded = TargetRegistry::embedded();
    EXPECT_TRUE(loaded) << loaded.error().message();
    return std::move(*loaded);
  }();
  return r;
}

inline const PresetLibrary&
presets()
{
  static const PresetLibrary p = [] {
    auto loaded = PresetLibrary::embedded();
    EXPECT_TRUE(loaded) << loaded.error().message();
    return std::move(*loaded);
  }();
  return p;
}

inline Result<Manifest>
parse(const std::string& text)
{
  return parse_manifest(text, "test.yaml", "/work", ManifestInputs{registry(), presets()});
}

// The message of a manifest that must fail.
inline std::string
error_of(const std::string& text)
{
  auto parsed = parse(text);
  EXPECT_FALSE(parsed) << "parsed although it should not:\n" << text;
  if (parsed) {
    return {};
  }
  EXPECT_EQ(parsed.error().category(), Errc::usage);
  EXPECT_EQ(parsed.error().code(), "E_MANIFEST");
  return parsed.error().message();
}

inline const std::string k_valid = R"(version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
precisions: [fp32, fp16]
shapes:
  batch_sizes: [1, 2]
  prefill_lengths: [16]
  decode_steps: 2
targets: [cpu, arc-a770]
bundle:
  channel: prod/llm
  expires: 30d
)";

} // namespace prewarm::manifest::testing
