// SPDX-License-Identifier: Apache-2.0
// Built-in model presets (manifests/presets.yaml, embedded): named
// architectures the representative engine runs with seeded random weights.
//
// File format (version 1):
//   version: 1
//   presets:
//     NAME: ARCHITECTURE
// ARCHITECTURE (also what a manifest model gives inline under `architecture:`):
//   type: decoder  hidden, layers, heads, kv_heads, head_dim, ffn, vocab (integers > 0),
//                  rope_theta, norm_eps (numbers > 0), tied_embeddings (bool),
//                  norm: rmsnorm|layernorm, activation: silu|gelu
//                  checks: heads * head_dim == hidden, heads % kv_heads == 0
//   type: cnn      input: {width, height, channels}, layers: [{out_channels, kernel,
//                  stride, padding, pool}], classes; the spatial size must stay >= 1
//   type: gptq     group_size, act_order (bool), layers: [{in, out}]; each layer's in is
//                  the previous layer's out, in % group_size == 0, in % 8 == 0 (8 nibbles
//                  per uint32 along K)
#pragma once

#include "base/error.hpp"
#include "model/architecture.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace prewarm::manifest {

class PresetLibrary
{
public:
  static Result<PresetLibrary> parse(std::string_view text, std::string source_name);
  static Result<PresetLibrary> embedded(); // manifests/presets.yaml as compiled in

  const model::ModelArchitecture* find(std::string_view name) const;
  std::vector<std::string> names() const;

private:
  std::vector<model::ModelArchitecture> m_presets;
};

// "decoder" | "cnn" | "gptq".
std::string_view architecture_type(const model::ModelArchitecture& architecture);

} // namespace prewarm::manifest
