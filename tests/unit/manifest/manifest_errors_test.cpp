// SPDX-License-Identifier: Apache-2.0
// Every manifest error names FILE:LINE:COLUMN, the field, and what is wrong.
#include "test_inputs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace prewarm::manifest {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::error_of;
using testing::k_valid;
using testing::parse;

std::string
replace(std::string text, const std::string& from, const std::string& to)
{
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(ManifestParse, ValidManifestFillsEveryField)
{
  auto m = parse(k_valid);
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_EQ(m->models.size(), 1u);
  EXPECT_EQ(m->models[0].name, "qwen");
  EXPECT_EQ(m->models[0].source, ModelSource::preset);
  ASSERT_TRUE(m->models[0].architecture);
  const auto& decoder = std::get<model::DecoderArchitecture>(m->models[0].architecture->body);
  EXPECT_EQ(decoder.hidden, 896);
  EXPECT_EQ(decoder.kv_heads, 2);
  EXPECT_EQ(decoder.vocab, 151936);
  EXPECT_TRUE(decoder.tied_embeddings);
  EXPECT_DOUBLE_EQ(decoder.rope_theta, 1e6);
  EXPECT_EQ(m->precisions, (std::vector{model::Precision::fp32, model::Precision::fp16}));
  EXPECT_EQ(m->shapes.batch_sizes, (std::vector{1, 2}));
  EXPECT_EQ(m->targets, (std::vector<std::string>{"cpu", "arc-a770"}));
  EXPECT_EQ(m->bundle.channel, "prod/llm");
  EXPECT_EQ(m->bundle.expires, std::chrono::hours(24 * 30));
  EXPECT_EQ(m->bytes_sha256.size(), 64u);
}

TEST(ManifestParse, EmbeddedDefaultManifestParses)
{
  auto m = load_default_manifest(ManifestInputs{testing::registry(), testing::presets()});
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->targets, std::vector<std::string>{"cpu"});
  EXPECT_FALSE(m->precisions.empty());
}

TEST(ManifestErrors, UnknownTopLevelKeyWithSuggestion)
{
  const auto message = error_of(replace(k_valid, "targets:", "tragets:"));
  EXPECT_THAT(message, StartsWith("test.yaml:10:1: tragets: unknown key 'tragets'"));
  EXPECT_THAT(message, HasSubstr("(did you mean 'targets'?)"));
}

TEST(ManifestErrors, UnknownNestedKey)
{
  const auto message = error_of(replace(k_valid, "  decode_steps: 2", "  decode_step: 2"));
  EXPECT_THAT(message, StartsWith("test.yaml:9:3: shapes.decode_step: unknown key 'decode_step'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'decode_steps'"));
}

TEST(ManifestErrors, UnknownKeyInModel)
{
  const auto message = error_of(replace(k_valid, "    preset: qwen2.5-0.5b", "    preset: qwen2.5-0.5b\n    prest: x"));
  EXPECT_THAT(message, StartsWith("test.yaml:5:5: models[0].prest: unknown key 'prest'"));
}

TEST(ManifestErrors, WrongTypeNamesTheField)
{
  EXPECT_THAT(error_of(replace(k_valid, "decode_steps: 2", "decode_steps: two")),
              StartsWith("test.yaml:9:17: shapes.decode_steps: expected an integer, got 'two'"));
  EXPECT_THAT(error_of(replace(k_valid, "decode_steps: 2", "decode_steps: \"2\"")),
              HasSubstr("shapes.decode_steps: expected an integer"));
  EXPECT_THAT(error_of(replace(k_valid, "precisions: [fp32, fp16]", "precisions: fp32")),
              StartsWith("test.yaml:5:13: precisions: expected a list, got a scalar"));
  EXPECT_THAT(error_of(replace(k_valid, "  channel: prod/llm", "  channel: [a]")),
              HasSubstr("bundle.channel: expected a string, got a list"));
}

TEST(ManifestErrors, UnknownPrecisionWithSuggestion)
{
  const auto message = error_of(replace(k_valid, "[fp32, fp16]", "[fp32, fp166]"));
  EXPECT_THAT(message,
              StartsWith("test.yaml:5:20: precisions[1]: unknown precision 'fp166' (known: fp32, fp16, bf16, int8)"));
  EXPECT_THAT(message, HasSubstr("did you mean 'fp16'"));
  // bf16 is among the suggestions too.
  EXPECT_THAT(error_of(replace(k_valid, "[fp32, fp16]", "[fp32, bf61]")), HasSubstr("did you mean 'bf16'"));
}

TEST(ManifestParse, Bf16IsAPrecisionInTheListAndInCommandArguments)
{
  auto m = parse(replace(k_valid, "[fp32, fp16]", "[bf16, fp16]"));
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->precisions, (std::vector{model::Precision::bf16, model::Precision::fp16}));
  EXPECT_EQ(precision_name(model::Precision::bf16), "bf16");
  EXPECT_EQ(parse_precision("bf16"), model::Precision::bf16);
  EXPECT_EQ(parse_precision("BF16"), std::nullopt); // names are exact, as in job ids
  for (const auto precision : model::k_precisions) {
    EXPECT_EQ(parse_precision(precision_name(precision)), precision) << precision_name(precision);
  }
  CommandWorkload command;
  command.argv = {"python3", "warmup.py", "--dtype", "{precision}", "--tag={precision}-{precision}"};
  EXPECT_EQ(command.argv_for(model::Precision::bf16),
            (std::vector<std::string>{"python3", "warmup.py", "--dtype", "bf16", "--tag=bf16-bf16"}));
}

TEST(ManifestErrors, UnknownTargetWithSuggestion)
{
  const auto message = error_of(replace(k_valid, "[cpu, arc-a770]", "[cpu, arc-a77]"));
  EXPECT_THAT(message, StartsWith("test.yaml:10:16: targets[1]: unknown target 'arc-a77'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'arc-a770'"));
}

TEST(ManifestErrors, UnknownPresetWithSuggestion)
{
  const auto message = error_of(replace(k_valid, "preset: qwen2.5-0.5b", "preset: qwen2.5-05b"));
  EXPECT_THAT(message, StartsWith("test.yaml:4:13: models[0].preset: unknown preset 'qwen2.5-05b'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'qwen2.5-0.5b'"));
}

TEST(ManifestErrors, DuplicateListEntries)
{
  EXPECT_THAT(error_of(replace(k_valid, "[fp32, fp16]", "[fp32, fp32]")),
              StartsWith("test.yaml:5:20: precisions[1]: duplicate 'fp32' (first at 5:14)"));
  EXPECT_THAT(error_of(replace(k_valid, "[cpu, arc-a770]", "[cpu, cpu]")),
              StartsWith("test.yaml:10:16: targets[1]: duplicate 'cpu' (first at 10:11)"));
  EXPECT_THAT(error_of(replace(k_valid, "batch_sizes: [1, 2]", "batch_sizes: [2, 2]")),
              StartsWith("test.yaml:7:20: shapes.batch_sizes[1]: duplicate 2"));
}

TEST(ManifestErrors, DuplicateModelNames)
{
  const auto message = error_of(replace(k_valid, "precisions:", "  - name: qwen\n    preset: lprnet\nprecisions:"));
  EXPECT_THAT(message, StartsWith("test.yaml:5:11: models[1].name: duplicate model name 'qwen' (first at test.yaml:3:5)"));
}

TEST(ManifestErrors, DuplicateYamlKeysAreDetected)
{
  // yaml-cpp keeps both and node["key"] returns the first: without our own
  // check the second value would be silently ignored.
  const auto message = error_of(replace(k_valid, "  decode_steps: 2", "  decode_steps: 2\n  decode_steps: 3"));
  EXPECT_THAT(message, StartsWith("test.yaml:10:3: shapes.decode_steps: duplicate key 'decode_steps' (first at line 9)"));
  EXPECT_THAT(error_of(k_valid + "version: 1\n"), HasSubstr("duplicate key 'version'"));
}

TEST(ManifestErrors, EmptyLists)
{
  EXPECT_THAT(error_of(replace(k_valid, "[cpu, arc-a770]", "[]")),
              StartsWith("test.yaml:10:10: targets: the list must not be empty"));
  EXPECT_THAT(error_of(replace(k_valid, "[fp32, fp16]", "[]")), HasSubstr("precisions: the list must not be empty"));
  EXPECT_THAT(error_of(replace(k_valid, "batch_sizes: [1, 2]", "batch_sizes: []")),
              HasSubstr("shapes.batch_sizes: the list must not be empty"));
}

TEST(ManifestErrors, MissingRequiredKey)
{
  EXPECT_THAT(error_of(replace(k_valid, "targets: [cpu, arc-a770]\n", "")),
              HasSubstr("missing required key 'targets'"));
}

TEST(ManifestErrors, ModelNeedsExactlyOneSource)
{
  EXPECT_THAT(error_of(replace(k_valid, "    preset: qwen2.5-0.5b", "    preset: qwen2.5-0.5b\n    command: {argv: [x]}")),
              HasSubstr("models[0]: give only one of 'preset', 'architecture' or 'command'"));
  EXPECT_THAT(error_of(replace(k_valid, "    preset: qwen2.5-0.5b\n", "")),
              HasSubstr("needs one of 'preset', 'architecture' or 'command'"));
}

TEST(ManifestErrors, BadDurationAndSyntax)
{
  EXPECT_THAT(error_of(replace(k_valid, "expires: 30d", "expires: 30 days")),
              StartsWith("test.yaml:13:12: bundle.expires: expected a duration"));
  EXPECT_THAT(error_of("version: 1\nmodels: [\n"), StartsWith("test.yaml:"));
  EXPECT_THAT(error_of("version: 1\nmodels: [\n"), HasSubstr("YAML syntax error"));
  EXPECT_THAT(error_of(replace(k_valid, "version: 1", "version: 2")), HasSubstr("version: 2 is out of range [1, 1]"));
}

TEST(ManifestCommand, ParsesAndTemplatesPrecision)
{
  const std::string text = R"(version: 1
models:
  - name: warmup
    command:
      argv: [python3, warmup.py, "--dtype={precision}", "{precision}{precision}"]
      cwd: scripts
      env: {PYOPENCL_NO_CACHE: "1"}
      timeout: 10m
      shell: false
      kinds: [pocl, triton]
precisions: [fp16]
targets: [cpu]
)";
  auto m = parse(text);
  ASSERT_TRUE(m) << m.error().message();
  const auto& command = *m->models[0].command;
  EXPECT_EQ(m->models[0].source, ModelSource::command);
  EXPECT_FALSE(m->models[0].is_builtin());
  EXPECT_EQ(command.cwd, std::filesystem::path("/work/scripts"));
  EXPECT_EQ(command.env.at("PYOPENCL_NO_CACHE"), "1");
  EXPECT_EQ(command.timeout, std::chrono::minutes(10));
  EXPECT_EQ(command.shell, ShellMode::direct);
  EXPECT_EQ(command.kinds, (std::vector<bundle::CacheKind>{bundle::CacheKind::pocl, bundle::CacheKind::triton}));
  EXPECT_EQ(command.argv_for(model::Precision::fp16),
            (std::vector<std::string>{"python3", "warmup.py", "--dtype=fp16", "fp16fp16"}));
}

// Written as a user writes a torch.compile manifest: no precision anywhere,
// so no precisions list either; one job per model. A command that names
// {precision}, or a built-in model, still needs the list, and the error says
// which model and why.
TEST(ManifestCommand, PrecisionsAreRequiredOnlyWhereAModelRunsPerPrecision)
{
  const std::string text = R"(version: 1
models:
  - name: app
    command:
      argv: [python3, app.py]
      kinds: [inductor]
targets: [cpu]
)";
  auto m = parse(text);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->precisions.size(), 1u) << "one job per model";

  const auto per_precision = error_of(replace(text, "app.py]", "app.py, \"{precision}\"]"));
  EXPECT_THAT(per_precision, HasSubstr("precisions"));
  EXPECT_THAT(per_precision, HasSubstr("required: model 'app'"));
  EXPECT_THAT(per_precision, HasSubstr("names {precision}"));
}

TEST(ManifestCommand, UnknownKindAndBadShellType)
{
  const std::string base = R"(version: 1
models:
  - name: warmup
    command:
      argv: [python3]
      KEY
precisions: [fp32]
targets: [cpu]
)";
  EXPECT_THAT(error_of(replace(base, "KEY", "kinds: [pocll]")),
              StartsWith("test.yaml:6:15: models[0].command.kinds[0]: unknown cache kind 'pocll'"));
  EXPECT_THAT(error_of(replace(base, "KEY", "kinds: [pocll]")), HasSubstr("did you mean 'pocl'"));
  // dynamo is a whole Inductor cache: naming both would leave one empty.
  EXPECT_THAT(error_of(replace(base, "KEY", "kinds: [inductor, dynamo]")),
              StartsWith("test.yaml:6:14: models[0].command.kinds: kinds inductor and dynamo exclude each other"));
  EXPECT_THAT(error_of(replace(base, "KEY", "shell: yes")),
              StartsWith("test.yaml:6:14: models[0].command.shell: expected true or false, got 'yes'"));
}

// An interpreter option outranks the capture's PYTHONPYCACHEPREFIX and its
// dropping of PYTHONDONTWRITEBYTECODE: the warm-up would run in full and
// the pycache kind stay empty. Refused before anything runs, naming the item.
TEST(ManifestCommand, PycacheRefusesPythonOptionsThatStopBytecode)
{
  const std::string base = R"(version: 1
models:
  - name: warmup
    command:
      argv: ARGV
      kinds: KINDS
precisions: [fp32]
targets: [cpu]
)";
  const auto with = [&](const std::string& argv, const std::string& kinds = "[dynamo, pycache]") {
    return replace(replace(base, "ARGV", argv), "KINDS", kinds);
  };
  EXPECT_THAT(error_of(with("[python3, -B, warmup.py]")),
              StartsWith("test.yaml:5:23: models[0].command.argv[1]: python's -B writes no bytecode: the pycache "
                         "kind would capture nothing (remove -B or the kind)"));
  EXPECT_THAT(error_of(with("[/usr/bin/python3.11, -OB, warmup.py]")),
              StartsWith("test.yaml:5:35: models[0].command.argv[1]: python's -B"));
  EXPECT_THAT(error_of(with("[python, -u, -E, warmup.py]")),
              HasSubstr("models[0].command.argv[2]: python's -E ignores PYTHONPYCACHEPREFIX"));
  EXPECT_THAT(error_of(with("[python3, -I, warmup.py]")), HasSubstr("argv[1]: python's -I (isolated mode"));
  EXPECT_THAT(error_of(with("[python3, -X, pycache_prefix=/tmp/p, warmup.py]")),
              HasSubstr("models[0].command.argv[2]: python's -X pycache_prefix outranks PYTHONPYCACHEPREFIX"));
  EXPECT_THAT(error_of(with("[python3, -Xpycache_prefix=/tmp/p, warmup.py]")),
              HasSubstr("models[0].command.argv[1]: python's -X pycache_prefix"));
  EXPECT_THAT(error_of(with("[python3, -W, ignore, -B, warmup.py]", "[pycache]")), HasSubstr("argv[3]: python's -B"));

  // Not the interpreter's options, or no pycache kind, or not Python: accepted.
  for (const auto& ok : {with("[python3, warmup.py, -B]"), with("[python3, -c, 'import x', -B]"),
                         with("[python3, -m, warmup, -E]"), with("[python3, -X, dev, -W, error, warmup.py]"),
                         with("[python3, -X, importtime, --, -B]"), with("[python3, -B, warmup.py]", "[inductor]"),
                         with("[bash, -B, warmup.sh]", "[pycache]"), with("[env, python3, -B, warmup.py]", "[pycache]")}) {
    auto m = parse(ok);
    EXPECT_TRUE(m) << ok << (m ? "" : m.error().message());
  }
  // The environment's PYTHONDONTWRITEBYTECODE is the capture's to drop (as
  // images set it), and a shell line is not parsed.
  auto dont_write = parse(replace(with("[python3, warmup.py]", "[pycache]"), "      kinds:",
                                  "      env: {PYTHONDONTWRITEBYTECODE: \"1\"}\n      kinds:"));
  EXPECT_TRUE(dont_write) << dont_write.error().message();
  auto shell = parse(replace(with("[python3 -B warmup.py]", "[pycache]"), "      kinds:", "      shell: true\n      kinds:"));
  EXPECT_TRUE(shell) << shell.error().message();
}

TEST(ManifestArchitecture, InlineArchitectureIsCheckedForConsistency)
{
  const std::string base = R"(version: 1
models:
  - name: tiny
    architecture:
      type: decoder
      hidden: 128
      layers: 2
      heads: HEADS
      kv_heads: 2
      head_dim: 32
      ffn: 256
      vocab: 1000
precisions: [fp32]
targets: [cpu]
)";
  auto ok = parse(replace(base, "HEADS", "4"));
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(ok->models[0].source, ModelSource::architecture);
  EXPECT_EQ(ok->models[0].architecture->name, "tiny");
  EXPECT_THAT(error_of(replace(base, "HEADS", "3")),
              StartsWith("test.yaml:5:7: models[0].architecture: heads * head_dim (3 * 32) must equal hidden (128)"));
  EXPECT_THAT(error_of(replace(base, "type: decoder", "type: decodr")),
              HasSubstr("unknown architecture type 'decodr' (one of: decoder, cnn, gptq) (did you mean 'decoder'?)"));
  EXPECT_THAT(error_of(replace(base, "ffn: 256", "ffn: 256\n      bias: true")),
              StartsWith("test.yaml:12:7: models[0].architecture.bias: unknown key 'bias'"));
}

} // namespace
} // namespace prewarm::manifest
