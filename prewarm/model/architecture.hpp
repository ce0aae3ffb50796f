// SPDX-License-Identifier: Apache-2.0
// What a representative inference runs: a model architecture (a preset from
// manifests/presets.yaml or a custom one in the manifest, parsed by the
// manifest layer into these structs), a precision and the shapes to run.
#pragma once

#include "model/precision.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace prewarm::model {

// Decoder-only transformer (Qwen/Llama style). int8 runs W8A8: int8 weights
// with per-output-channel scales, per-token dynamically quantized int8
// activations, int32 accumulation.
struct DecoderArchitecture
{
  int hidden = 0;
  int layers = 0;
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention when < heads
  int head_dim = 0;
  int ffn = 0;       // SwiGLU intermediate size
  int vocab = 0;
  double rope_theta = 10000.0;
  double norm_eps = 1e-6;
  bool tied_embeddings = false;
  enum class Norm { rmsnorm, layernorm } norm = Norm::rmsnorm;
  enum class Activation { silu, gelu } activation = Activation::silu;
};

// A small CNN (LPRNet style): conv2d with folded batch-norm + ReLU, max-pool.
struct ConvLayer
{
  int out_channels = 0;
  int kernel = 3;
  int stride = 1;
  int padding = 1;
  int pool = 0; // max-pool window (and stride) after the conv; 0 = none
};

struct CnnArchitecture
{
  int input_width = 0;
  int input_height = 0;
  int input_channels = 3;
  std::vector<ConvLayer> layers;
  int classes = 0; // final 1x1 conv to this many channels
};

// A stack of GPTQ-style 4-bit linear layers: per-group scales and zeros,
// act-order g_idx (the reorder step runs as its own kernel).
struct GptqLinear
{
  int in_features = 0;
  int out_features = 0;
};

struct GptqStackArchitecture
{
  std::vector<GptqLinear> layers;
  int group_size = 128;
  bool act_order = true;
};

struct ModelArchitecture
{
  std::string name; // preset name or the manifest's model name
  std::variant<DecoderArchitecture, CnnArchitecture, GptqStackArchitecture> body;
};

// The shapes one job runs; every combination runs at least once.
struct Shapes
{
  std::vector<int> batch_sizes{1};
  std::vector<int> prefill_lengths{16}; // decoder/GPTQ: tokens per prefill; CNN: ignored
  int decode_steps = 2;                 // decoder only
};

enum class Coverage { representative, full }; // representative: one layer per distinct shape

} // namespace prewarm::model
