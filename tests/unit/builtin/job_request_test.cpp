// SPDX-License-Identifier: Apache-2.0
#include "builtin/job_request.hpp"

#include "base/files.hpp"
#include "builtin/builtin_executor.hpp"
#include "manifest/manifest.hpp"
#include "manifest/presets.hpp"
#include "manifest/target_registry.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cstdlib>

namespace prewarm::builtin {
namespace {

using nlohmann::json;

std::string
text_of(const std::filesystem::path& file)
{
  auto text = read_file(file.string(), 1 << 20);
  return text ? *text : text.error().message();
}

BuiltinJobRequest
decoder_spec()
{
  BuiltinJobRequest spec;
  spec.job_id = "cpu/tiny/fp16";
  spec.target = "cpu";
  spec.model_name = "tiny";
  spec.manifest_source = "tiny.yaml";
  spec.manifest_sha256 = std::string(64, 'a');
  model::DecoderArchitecture decoder;
  decoder.hidden = 64;
  decoder.layers = 2;
  decoder.heads = 4;
  decoder.kv_heads = 2;
  decoder.head_dim = 16;
  decoder.ffn = 128;
  decoder.vocab = 256;
  decoder.rope_theta = 500000.0;
  decoder.norm = model::DecoderArchitecture::Norm::layernorm;
  decoder.activation = model::DecoderArchitecture::Activation::gelu;
  decoder.tied_embeddings = true;
  spec.model = {"tiny", decoder};
  spec.precision = model::Precision::fp16;
  spec.shapes = {{1, 4}, {8}, 3};
  spec.coverage = model::Coverage::full;
  spec.device_selector = "0";
  spec.device_description = "0: cpu (test)";
  spec.caches = {{bundle::CacheKind::programs, "/staging/programs"}, {bundle::CacheKind::pocl, "pocl"}};
  spec.report_file = "/work/report.json";
  return spec;
}

// The error of parsing decoder_spec() after `edit` changed its JSON.
template<typename Edit>
std::string
error_after(Edit edit)
{
  auto document = json::parse(to_json_text(decoder_spec()));
  edit(document);
  const auto parsed = parse_job_request(document.dump(), "job-request.json");
  EXPECT_FALSE(parsed);
  if (parsed) {
    return {};
  }
  EXPECT_EQ(parsed.error().category(), Errc::usage);
  return parsed.error().message();
}

TEST(JobRequest, RoundTripsEveryModelKind)
{
  auto decoder = decoder_spec();
  auto cnn = decoder_spec();
  cnn.model = {"plates", model::CnnArchitecture{94, 24, 3, {{64, 3, 1, 1, 2}, {128, 5, 2, 0, 0}}, 68}};
  auto gptq = decoder_spec();
  gptq.model = {"stack", model::GptqStackArchitecture{{{256, 512}, {512, 256}}, 64, false}};
  for (const auto& spec : {decoder, cnn, gptq}) {
    const auto text = to_json_text(spec);
    const auto parsed = parse_job_request(text, "job-request.json");
    ASSERT_TRUE(parsed) << parsed.error().message();
    EXPECT_EQ(to_json_text(*parsed), text);
    EXPECT_EQ(parsed->model.body.index(), spec.model.body.index());
  }
  const auto parsed = parse_job_request(to_json_text(decoder), "job-request.json");
  ASSERT_TRUE(parsed);
  const auto& body = std::get<model::DecoderArchitecture>(parsed->model.body);
  EXPECT_EQ(body.norm, model::DecoderArchitecture::Norm::layernorm);
  EXPECT_EQ(body.rope_theta, 500000.0);
  EXPECT_EQ(parsed->shapes.batch_sizes, (std::vector<int>{1, 4}));
  EXPECT_EQ(parsed->caches.size(), 2u);
  EXPECT_EQ(parsed->caches[1].directory, "pocl");
  EXPECT_EQ(parsed->precision, model::Precision::fp16);
}

TEST(JobRequest, AnUnknownFieldIsNamed)
{
  EXPECT_NE(error_after([](json& j) { j["model"]["experts"] = 8; }).find("field 'model.experts': unknown field"),
            std::string::npos);
  EXPECT_NE(error_after([](json& j) { j["extra"] = true; }).find("field 'extra': unknown field"), std::string::npos);
  EXPECT_NE(error_after([](json& j) { j["caches"]["opencl"] = "x"; }).find("field 'caches.opencl': unknown field"),
            std::string::npos);
}

TEST(JobRequest, AMissingOrMistypedFieldIsNamed)
{
  const auto missing = error_after([](json& j) { j["shapes"].erase("decode_steps"); });
  EXPECT_NE(missing.find("job request job-request.json: field 'shapes.decode_steps': missing"), std::string::npos)
    << missing;
  const auto mistyped = error_after([](json& j) { j["shapes"]["batch_sizes"][1] = "4"; });
  EXPECT_NE(mistyped.find("field 'shapes.batch_sizes[1]': expected an integer, found string"), std::string::npos)
    << mistyped;
  const auto out_of_range = error_after([](json& j) { j["model"]["hidden"] = 0; });
  EXPECT_NE(out_of_range.find("field 'model.hidden': 0 is out of range"), std::string::npos) << out_of_range;
  const auto precision = error_after([](json& j) { j["job"]["precision"] = "fp8"; });
  EXPECT_NE(precision.find("field 'job.precision': unknown precision 'fp8'"), std::string::npos) << precision;
  const auto kind = error_after([](json& j) { j["model"]["kind"] = "moe"; });
  EXPECT_NE(kind.find("field 'model.kind': unknown value 'moe' (one of: decoder, cnn, gptq)"), std::string::npos)
    << kind;
}

TEST(JobRequest, AnotherSchemaOrVersionIsRefused)
{
  const auto version = error_after([](json& j) { j["schema_version"] = 2; });
  EXPECT_NE(version.find("field 'schema_version': version 2 is not the version this prewarm reads (1)"),
            std::string::npos)
    << version;
  const auto schema = error_after([](json& j) { j["schema"] = "prewarm.manifest"; });
  EXPECT_NE(schema.find("field 'schema'"), std::string::npos) << schema;
  const auto not_json = parse_job_request("{\"schema\":", "job-request.json");
  ASSERT_FALSE(not_json);
  EXPECT_NE(not_json.error().message().find("job request job-request.json: not valid JSON"), std::string::npos);
  const auto not_object = parse_job_request("[]", "job-request.json");
  ASSERT_FALSE(not_object);
  EXPECT_NE(not_object.error().message().find("expected an object, found array"), std::string::npos);
}

// The parent plans from a manifest and writes the spec; the manifest then
// disappears and another takes its place; the child still runs the planned
// job (it never reads the manifest) on PoCL.
TEST(JobRequest, TheChildRunsTheSpecWithoutTheManifest)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  const auto manifest_file = dir->path() / "tiny.yaml";
  ASSERT_TRUE(write_file_atomic(manifest_file.string(), R"(version: 1
models:
  - name: tiny
    architecture:
      type: decoder
      hidden: 64
      layers: 2
      heads: 4
      kv_heads: 2
      head_dim: 16
      ffn: 128
      vocab: 256
precisions: [fp32]
shapes:
  batch_sizes: [1]
  prefill_lengths: [8]
  decode_steps: 1
targets: [cpu]
)",
                                0644, Durability::none));
  const auto registry = manifest::TargetRegistry::embedded();
  const auto presets = manifest::PresetLibrary::embedded();
  ASSERT_TRUE(registry && presets);
  const auto parsed = manifest::load_manifest_file(manifest_file, {*registry, *presets});
  ASSERT_TRUE(parsed) << parsed.error().message();
  manifest::Job job;
  job.id = "cpu/tiny/fp32";
  job.target = "cpu";
  job.model = "tiny";
  job.strategy = manifest::Strategy::run;
  job.device = manifest::HostDevice{0, "0: the first OpenCL device", {}, false};
  const auto* target = registry->find("cpu");
  ASSERT_NE(target, nullptr);
  const auto work_dir = dir->path() / "job";
  const auto staging = work_dir / "staging";
  const jobs::JobContext context{*parsed, job, parsed->models.front(), *target, work_dir};
  const auto spec = builtin_job_request(context, staging, work_dir / "report.json");
  ASSERT_TRUE(spec) << spec.error().message();
  EXPECT_EQ(spec->manifest_sha256, parsed->bytes_sha256);
  for (const auto& cache : spec->caches) {
    std::filesystem::create_directories(staging / std::string(bundle::to_string(cache.kind)));
  }
  const auto spec_file = work_dir / "job-request.json";
  ASSERT_TRUE(write_file_atomic(spec_file.string(), to_json_text(*spec), 0600, Durability::none));

  std::filesystem::remove(manifest_file);
  ASSERT_TRUE(write_file_atomic(manifest_file.string(), "version: 1\nmodels: [\n", 0644, Durability::none));

  const auto command =
    fmt::format("cd '{}' && PREWARM_DETERMINISTIC_TEMPNAMES=1 '{}' run-job --spec '{}' > '{}' 2>&1", staging.string(),
                PREWARM_BINARY, spec_file.string(), (work_dir / "job.log").string());
  const int status = std::system(command.c_str());
  ASSERT_EQ(status, 0) << text_of(work_dir / "job.log");
  const auto report_text = read_file((work_dir / "report.json").string(), 64 << 20);
  ASSERT_TRUE(report_text);
  const auto report = json::parse(*report_text);
  EXPECT_EQ(report.at("model"), "tiny");
  EXPECT_EQ(report.at("precision"), "fp32");
  EXPECT_FALSE(std::filesystem::is_empty(staging / "programs"));
  EXPECT_FALSE(std::filesystem::is_empty(staging / "pocl"));
}

TEST(JobRequest, RunJobNamesTheBadFieldOfASpec)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  auto document = json::parse(to_json_text(decoder_spec()));
  document["model"]["layers"] = -1;
  const auto spec_file = dir->path() / "job-request.json";
  ASSERT_TRUE(write_file_atomic(spec_file.string(), document.dump(), 0600, Durability::none));
  const auto log = dir->path() / "out.log";
  const auto command =
    fmt::format("'{}' run-job --spec '{}' > '{}' 2>&1", PREWARM_BINARY, spec_file.string(), log.string());
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(text_of(log).find(fmt::format("prewarm: error: job request {}: field 'model.layers': -1 is out of range",
                                          spec_file.string())),
            std::string::npos)
    << text_of(log);
}

} // namespace
} // namespace prewarm::builtin
