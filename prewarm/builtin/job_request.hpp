// SPDX-License-Identifier: Apache-2.0
// The job request: everything the child of a built-in job needs, written by the
// parent (`prewarm build`) from the plan it made, read by `prewarm run-job
// --spec FILE`. The child never reads the manifest or the target registry:
// the bundle records the digest of the manifest bytes the plan came from, and
// the spec carries that digest, so what the jobs ran is what the bundle says.
//
// Format (JSON, one object; every field required, no other field allowed):
//   schema          "prewarm.job-request"
//   schema_version  1
//   job             {id, target, model, precision}        "cpu/m/fp32", ...
//   manifest        {source, sha256}                      where the plan came from
//   model           {name, kind, ...}                     kind "decoder": hidden, layers,
//                   heads, kv_heads, head_dim, ffn, vocab, rope_theta, norm_eps,
//                   tied_embeddings, norm, activation; kind "cnn": input_width,
//                   input_height, input_channels, layers [{out_channels, kernel,
//                   stride, padding, pool}], classes; kind "gptq": layers
//                   [{in_features, out_features}], group_size, act_order
//   precision       "fp32" | "fp16" | "bf16" | "int8"
//   shapes          {batch_sizes [int], prefill_lengths [int], decode_steps}
//   coverage        "representative" | "full"
//   device          {selector, description}               engine selector ("0"); the plan's device
//   caches          {"<kind>": "<directory>", ...}        cache kinds (runtime/bundle/cache_kind.hpp)
//   report          path of the engine's JSON report
// A malformed spec is Errc::usage naming the file and the field
// ("model.layers[2].kernel").
#pragma once

#include "base/error.hpp"
#include "bundle/cache_kind.hpp"
#include "model/architecture.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::builtin {

inline constexpr std::string_view k_job_request_schema = "prewarm.job-request";
inline constexpr int k_job_request_schema_version = 1;

struct CacheDirectory
{
  bundle::CacheKind kind = bundle::CacheKind::programs;
  std::filesystem::path directory; // relative: to the child's working directory
};

struct BuiltinJobRequest
{
  std::string job_id; // "<target>/<model>/<precision>"
  std::string target;
  std::string model_name;      // the manifest's model name
  std::string manifest_source; // path as given, or "<embedded default.yaml>"
  std::string manifest_sha256; // digest of the manifest bytes the plan was made from
  model::ModelArchitecture model;
  model::Precision precision = model::Precision::fp32;
  model::Shapes shapes;
  model::Coverage coverage = model::Coverage::representative;
  std::string device_selector;    // engine device selector ("0")
  std::string device_description; // the device the plan chose ("0: pthread-... (PoCL)")
  std::vector<CacheDirectory> caches;
  std::filesystem::path report_file; // the engine's JSON report is written here
};

std::string to_json_text(const BuiltinJobRequest& spec);

// Strict: the schema and its version, every field present with its type, no
// unknown field. `source_name` names the spec in messages.
Result<BuiltinJobRequest> parse_job_request(std::string_view text, std::string_view source_name);
Result<BuiltinJobRequest> load_job_request(const std::filesystem::path& file);

} // namespace prewarm::builtin
