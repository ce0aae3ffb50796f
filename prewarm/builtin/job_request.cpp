// SPDX-License-Identifier: Apache-2.0
#include "builtin/job_request.hpp"

#include "base/files.hpp"
#include "jobs/strict_json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>

namespace prewarm::builtin {
namespace {

using nlohmann::json;

constexpr std::int64_t k_int_max = std::numeric_limits<int>::max();
constexpr std::size_t k_spec_max_bytes = 16 << 20;

std::string_view
norm_name(model::DecoderArchitecture::Norm norm)
{
  return norm == model::DecoderArchitecture::Norm::layernorm ? "layernorm" : "rmsnorm";
}

std::string_view
activation_name(model::DecoderArchitecture::Activation activation)
{
  return activation == model::DecoderArchitecture::Activation::gelu ? "gelu" : "silu";
}

std::string_view
coverage_name(model::Coverage coverage)
{
  return coverage == model::Coverage::full ? "full" : "representative";
}

json
model_json(const model::ModelArchitecture& model)
{
  json out = {{"name", model.name}};
  if (const auto* decoder = std::get_if<model::DecoderArchitecture>(&model.body)) {
    out["kind"] = "decoder";
    out["hidden"] = decoder->hidden;
    out["layers"] = decoder->layers;
    out["heads"] = decoder->heads;
    out["kv_heads"] = decoder->kv_heads;
    out["head_dim"] = decoder->head_dim;
    out["ffn"] = decoder->ffn;
    out["vocab"] = decoder->vocab;
    out["rope_theta"] = decoder->rope_theta;
    out["norm_eps"] = decoder->norm_eps;
    out["tied_embeddings"] = decoder->tied_embeddings;
    out["norm"] = norm_name(decoder->norm);
    out["activation"] = activation_name(decoder->activation);
  } else if (const auto* cnn = std::get_if<model::CnnArchitecture>(&model.body)) {
    out["kind"] = "cnn";
    out["input_width"] = cnn->input_width;
    out["input_height"] = cnn->input_height;
    out["input_channels"] = cnn->input_channels;
    out["layers"] = json::array();
    for (const auto& layer : cnn->layers) {
      out["layers"].push_back({{"out_channels", layer.out_channels},
                               {"kernel", layer.kernel},
                               {"stride", layer.stride},
                               {"padding", layer.padding},
                               {"pool", layer.pool}});
    }
    out["classes"] = cnn->classes;
  } else {
    const auto& gptq = std::get<model::GptqStackArchitecture>(model.body);
    out["kind"] = "gptq";
    out["layers"] = json::array();
    for (const auto& layer : gptq.layers) {
      out["layers"].push_back({{"in_features", layer.in_features}, {"out_features", layer.out_features}});
    }
    out["group_size"] = gptq.group_size;
    out["act_order"] = gptq.act_order;
  }
  return out;
}

using jobs::ObjectReader;

Result<int>
read_int(ObjectReader& reader, std::string_view key, std::int64_t min)
{
  PW_ASSIGN(const auto value, reader.integer(key, min, k_int_max));
  return static_cast<int>(value);
}

// The elements of the array `key`, each an object read by `read`.
template<typename T, typename ReadOne>
Result<std::vector<T>>
read_objects(ObjectReader& reader, std::string_view key, ReadOne read)
{
  PW_ASSIGN(const auto* array, reader.array(key));
  std::vector<T> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    PW_ASSIGN(auto element,
              ObjectReader::open((*array)[i], fmt::format("{}[{}]", reader.path_of(key), i), reader.source()));
    PW_ASSIGN(auto value, read(element));
    PW_TRY(element.finish());
    out.push_back(std::move(value));
  }
  return out;
}

Result<std::vector<int>>
read_positive_ints(ObjectReader& reader, std::string_view key)
{
  PW_ASSIGN(const auto* array, reader.array(key));
  if (array->empty()) {
    return fail(ObjectReader::field_error(reader.source(), reader.path_of(key), "must not be empty"));
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    PW_ASSIGN(const auto value,
              reader.integer_value((*array)[i], fmt::format("{}[{}]", reader.path_of(key), i), 1, k_int_max));
    out.push_back(static_cast<int>(value));
  }
  return out;
}

Result<model::DecoderArchitecture>
read_decoder(ObjectReader& reader)
{
  using Decoder = model::DecoderArchitecture;
  Decoder decoder;
  PW_ASSIGN(decoder.hidden, read_int(reader, "hidden", 1));
  PW_ASSIGN(decoder.layers, read_int(reader, "layers", 1));
  PW_ASSIGN(decoder.heads, read_int(reader, "heads", 1));
  PW_ASSIGN(decoder.kv_heads, read_int(reader, "kv_heads", 1));
  PW_ASSIGN(decoder.head_dim, read_int(reader, "head_dim", 1));
  PW_ASSIGN(decoder.ffn, read_int(reader, "ffn", 1));
  PW_ASSIGN(decoder.vocab, read_int(reader, "vocab", 1));
  PW_ASSIGN(decoder.rope_theta, reader.number("rope_theta"));
  PW_ASSIGN(decoder.norm_eps, reader.number("norm_eps"));
  PW_ASSIGN(decoder.tied_embeddings, reader.boolean("tied_embeddings"));
  PW_ASSIGN(decoder.norm, reader.choice<Decoder::Norm>(
                            "norm", {{"rmsnorm", Decoder::Norm::rmsnorm}, {"layernorm", Decoder::Norm::layernorm}}));
  PW_ASSIGN(decoder.activation,
            reader.choice<Decoder::Activation>(
              "activation", {{"silu", Decoder::Activation::silu}, {"gelu", Decoder::Activation::gelu}}));
  return decoder;
}

Result<model::CnnArchitecture>
read_cnn(ObjectReader& reader)
{
  model::CnnArchitecture cnn;
  PW_ASSIGN(cnn.input_width, read_int(reader, "input_width", 1));
  PW_ASSIGN(cnn.input_height, read_int(reader, "input_height", 1));
  PW_ASSIGN(cnn.input_channels, read_int(reader, "input_channels", 1));
  PW_ASSIGN(cnn.layers,
            read_objects<model::ConvLayer>(reader, "layers", [](ObjectReader& element) -> Result<model::ConvLayer> {
              model::ConvLayer layer;
              PW_ASSIGN(layer.out_channels, read_int(element, "out_channels", 1));
              PW_ASSIGN(layer.kernel, read_int(element, "kernel", 1));
              PW_ASSIGN(layer.stride, read_int(element, "stride", 1));
              PW_ASSIGN(layer.padding, read_int(element, "padding", 0));
              PW_ASSIGN(layer.pool, read_int(element, "pool", 0));
              return layer;
            }));
  PW_ASSIGN(cnn.classes, read_int(reader, "classes", 1));
  return cnn;
}

Result<model::GptqStackArchitecture>
read_gptq(ObjectReader& reader)
{
  model::GptqStackArchitecture gptq;
  PW_ASSIGN(gptq.layers,
            read_objects<model::GptqLinear>(reader, "layers", [](ObjectReader& element) -> Result<model::GptqLinear> {
              model::GptqLinear layer;
              PW_ASSIGN(layer.in_features, read_int(element, "in_features", 1));
              PW_ASSIGN(layer.out_features, read_int(element, "out_features", 1));
              return layer;
            }));
  PW_ASSIGN(gptq.group_size, read_int(reader, "group_size", 1));
  PW_ASSIGN(gptq.act_order, reader.boolean("act_order"));
  return gptq;
}

Result<model::ModelArchitecture>
read_model(ObjectReader& reader)
{
  model::ModelArchitecture model;
  PW_ASSIGN(model.name, reader.string("name"));
  enum class Kind { decoder, cnn, gptq };
  PW_ASSIGN(const auto kind,
            reader.choice<Kind>("kind", {{"decoder", Kind::decoder}, {"cnn", Kind::cnn}, {"gptq", Kind::gptq}}));
  switch (kind) {
  case Kind::decoder: {
    PW_ASSIGN(model.body, read_decoder(reader));
    break;
  }
  case Kind::cnn: {
    PW_ASSIGN(model.body, read_cnn(reader));
    break;
  }
  case Kind::gptq: {
    PW_ASSIGN(model.body, read_gptq(reader));
    break;
  }
  }
  return model;
}

Result<std::vector<CacheDirectory>>
read_caches(ObjectReader& parent)
{
  PW_ASSIGN(auto reader, parent.object("caches"));
  std::vector<CacheDirectory> caches;
  for (const auto kind : bundle::all_cache_kinds()) {
    const auto name = bundle::to_string(kind);
    if (!reader.has(name)) {
      continue;
    }
    PW_ASSIGN(const auto directory, reader.string(name));
    if (directory.empty()) {
      return fail(ObjectReader::field_error(reader.source(), reader.path_of(name), "must not be empty"));
    }
    caches.push_back({kind, directory});
  }
  PW_TRY(reader.finish()); // a kind this build does not know is an unknown field
  return caches;
}

Result<BuiltinJobRequest>
read_spec(ObjectReader& root)
{
  BuiltinJobRequest spec;
  PW_ASSIGN(const auto schema, root.string("schema"));
  if (schema != k_job_request_schema) {
    return fail(ObjectReader::field_error(root.source(), "schema",
                                          fmt::format("'{}' is not '{}'", schema, k_job_request_schema)));
  }
  PW_ASSIGN(const auto version, root.integer("schema_version", 0, k_int_max));
  if (version != k_job_request_schema_version) {
    return fail(ObjectReader::field_error(root.source(), "schema_version",
                                          fmt::format("version {} is not the version this prewarm reads ({}): "
                                                      "the builder and `prewarm run-job` are different builds",
                                                      version, k_job_request_schema_version)));
  }
  {
    PW_ASSIGN(auto job, root.object("job"));
    PW_ASSIGN(spec.job_id, job.string("id"));
    PW_ASSIGN(spec.target, job.string("target"));
    PW_ASSIGN(spec.model_name, job.string("model"));
    PW_ASSIGN(const auto precision_text, job.string("precision"));
    const auto precision = model::parse_precision(precision_text);
    if (!precision) {
      return fail(ObjectReader::field_error(
        root.source(), job.path_of("precision"),
        fmt::format("unknown precision '{}' (one of: {})", precision_text, model::precision_names())));
    }
    spec.precision = *precision;
    PW_TRY(job.finish());
  }
  {
    PW_ASSIGN(auto manifest, root.object("manifest"));
    PW_ASSIGN(spec.manifest_source, manifest.string("source"));
    PW_ASSIGN(spec.manifest_sha256, manifest.string("sha256"));
    PW_TRY(manifest.finish());
  }
  {
    PW_ASSIGN(auto model, root.object("model"));
    PW_ASSIGN(spec.model, read_model(model));
    PW_TRY(model.finish());
  }
  {
    PW_ASSIGN(auto shapes, root.object("shapes"));
    PW_ASSIGN(spec.shapes.batch_sizes, read_positive_ints(shapes, "batch_sizes"));
    PW_ASSIGN(spec.shapes.prefill_lengths, read_positive_ints(shapes, "prefill_lengths"));
    PW_ASSIGN(spec.shapes.decode_steps, read_int(shapes, "decode_steps", 0));
    PW_TRY(shapes.finish());
  }
  PW_ASSIGN(spec.coverage,
            root.choice<model::Coverage>(
              "coverage", {{"representative", model::Coverage::representative}, {"full", model::Coverage::full}}));
  {
    PW_ASSIGN(auto device, root.object("device"));
    PW_ASSIGN(spec.device_selector, device.string("selector"));
    PW_ASSIGN(spec.device_description, device.string("description"));
    PW_TRY(device.finish());
  }
  PW_ASSIGN(spec.caches, read_caches(root));
  PW_ASSIGN(const auto report, root.string("report"));
  if (report.empty()) {
    return fail(ObjectReader::field_error(root.source(), "report", "must not be empty"));
  }
  spec.report_file = report;
  PW_TRY(root.finish());
  return spec;
}

} // namespace

std::string
to_json_text(const BuiltinJobRequest& spec)
{
  json caches = json::object();
  for (const auto& cache : spec.caches) {
    caches[std::string(bundle::to_string(cache.kind))] = cache.directory.string();
  }
  const json out = {
    {"schema", k_job_request_schema},
    {"schema_version", k_job_request_schema_version},
    {"job",
     {{"id", spec.job_id},
      {"target", spec.target},
      {"model", spec.model_name},
      {"precision", model::to_string(spec.precision)}}},
    {"manifest", {{"source", spec.manifest_source}, {"sha256", spec.manifest_sha256}}},
    {"model", model_json(spec.model)},
    {"shapes",
     {{"batch_sizes", spec.shapes.batch_sizes},
      {"prefill_lengths", spec.shapes.prefill_lengths},
      {"decode_steps", spec.shapes.decode_steps}}},
    {"coverage", coverage_name(spec.coverage)},
    {"device", {{"selector", spec.device_selector}, {"description", spec.device_description}}},
    {"caches", caches},
    {"report", spec.report_file.string()},
  };
  return out.dump(2) + "\n";
}

Result<BuiltinJobRequest>
parse_job_request(std::string_view text, std::string_view source_name)
{
  const jobs::JsonSource source{"job request", std::string(source_name),
                                "the spec is written by `prewarm build`; rebuild rather than edit it"};
  PW_ASSIGN(const auto document, jobs::parse_json_document(text, source));
  PW_ASSIGN(auto root, ObjectReader::open(document, "", source));
  return read_spec(root);
}

Result<BuiltinJobRequest>
load_job_request(const std::filesystem::path& file)
{
  PW_ASSIGN_CTX(const auto text, fmt::format("reading the job request {}", file.string()),
                read_file(file.string(), k_spec_max_bytes));
  return parse_job_request(text, file.string());
}

} // namespace prewarm::builtin
