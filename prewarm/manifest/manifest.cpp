// SPDX-License-Identifier: Apache-2.0
#include "manifest/manifest.hpp"

#include "base/digest.hpp"
#include "base/files.hpp"
#include "base/time_format.hpp"
#include "manifest/architecture_reader.hpp"
#include "manifest/command_reader.hpp"
#include "manifest/embedded_manifests.hpp"
#include "manifest/suggest.hpp"
#include "manifest/yaml_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <utility>

namespace prewarm::manifest {

std::string
SourcePosition::to_string() const
{
  if (line <= 0) {
    return file;
  }
  return fmt::format("{}:{}:{}", file, line, column);
}

std::vector<std::string>
CommandWorkload::argv_for(model::Precision precision) const
{
  static constexpr std::string_view placeholder = "{precision}";
  std::vector<std::string> out;
  for (std::string arg : argv) {
    for (std::size_t at = arg.find(placeholder); at != std::string::npos;
         at = arg.find(placeholder, at + precision_name(precision).size())) {
      arg.replace(at, placeholder.size(), precision_name(precision));
    }
    out.push_back(std::move(arg));
  }
  return out;
}

bool
CommandWorkload::uses_precision() const
{
  static constexpr std::string_view placeholder = "{precision}";
  const auto names = [](std::string_view text) { return text.find(placeholder) != std::string_view::npos; };
  return std::any_of(argv.begin(), argv.end(), names) || names(cwd.string()) ||
         std::any_of(env.begin(), env.end(), [&](const auto& entry) { return names(entry.second); });
}

const IntelProfile*
Manifest::find_profile(std::string_view target) const
{
  const auto it = target_profiles.find(target);
  return it == target_profiles.end() ? nullptr : &it->second;
}

const ModelSpec*
Manifest::find_model(std::string_view name) const
{
  const auto it = std::find_if(models.begin(), models.end(), [&](const ModelSpec& m) { return m.name == name; });
  return it == models.end() ? nullptr : &*it;
}

std::string_view
precision_name(model::Precision precision)
{
  return model::to_string(precision);
}

std::optional<model::Precision>
parse_precision(std::string_view text)
{
  return model::parse_precision(text);
}

namespace {

SourcePosition
position_of(const yaml::Source& source, const YAML::Node& node)
{
  const auto mark = node.Mark();
  if (mark.is_null() || mark.line < 0) {
    return SourcePosition{source.name, 0, 0};
  }
  return SourcePosition{source.name, mark.line + 1, mark.column + 1};
}

bool
valid_model_name(std::string_view name)
{
  static const std::regex pattern("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  return std::regex_match(name.begin(), name.end(), pattern);
}

Result<ModelSpec>
read_model(const yaml::Source& source, const YAML::Node& node, const std::string& path,
           const std::filesystem::path& base_directory, const PresetLibrary& presets)
{
  PW_ASSIGN(auto map, yaml::Map::read(source, node, path, {"name", "preset", "architecture", "command"}));
  ModelSpec model;
  model.position = position_of(source, node);
  PW_ASSIGN(auto name_node, map.required("name"));
  PW_ASSIGN(model.name, yaml::read_string(source, name_node, map.path_of("name")));
  if (!valid_model_name(model.name)) {
    return fail(
      yaml::error_at(source, name_node.Mark(), map.path_of("name"),
                     fmt::format("'{}' is not a valid model name (letters, digits, '.', '_', '-')", model.name)));
  }
  int sources = 0;
  for (auto key : {"preset", "architecture", "command"}) {
    sources += map.get(key) ? 1 : 0;
  }
  if (sources != 1) {
    return fail(yaml::error_at(source, node.Mark(), path,
                               sources == 0 ? "needs one of 'preset', 'architecture' or 'command'"
                                            : "give only one of 'preset', 'architecture' or 'command'"));
  }
  if (auto preset = map.get("preset")) {
    model.source = ModelSource::preset;
    PW_ASSIGN(model.preset, yaml::read_string(source, *preset, map.path_of("preset")));
    const auto* architecture = presets.find(model.preset);
    if (architecture == nullptr) {
      const auto names = presets.names();
      return fail(yaml::error_at(source, preset->Mark(), map.path_of("preset"),
                                 fmt::format("unknown preset '{}' (known: {}){}", model.preset, fmt::join(names, ", "),
                                             did_you_mean(model.preset, names))));
    }
    model.architecture = *architecture;
  } else if (auto architecture = map.get("architecture")) {
    model.source = ModelSource::architecture;
    PW_ASSIGN(model.architecture, read_architecture(source, *architecture, map.path_of("architecture"), model.name));
  } else if (auto command = map.get("command")) {
    model.source = ModelSource::command;
    PW_ASSIGN(model.command, read_command(source, *command, map.path_of("command"), base_directory));
  }
  return model;
}

// Two models whose caches one variable locates cannot both be installed:
// the application gets one directory per variable, and `env` leaves a
// variable that two slices set unset, so neither cache would be used.
// Refused here, before any job runs (both jobs would run to no end).
Status
check_cache_variables(const yaml::Source& source, const std::vector<YAML::Node>& model_items, const Manifest& manifest)
{
  std::map<std::string, std::pair<const ModelSpec*, const CustomCacheSpec*>> cache_variables;
  for (std::size_t i = 0; i < manifest.models.size(); ++i) {
    const auto& model = manifest.models[i];
    if (!model.command) {
      continue;
    }
    for (std::size_t c = 0; c < model.command->caches.size(); ++c) {
      const auto& cache = model.command->caches[c];
      const auto [first, inserted] = cache_variables.emplace(cache.variable, std::pair{&model, &cache});
      if (inserted || first->second.first == &model) {
        continue;
      }
      return fail(yaml::error_at(
        source, std::as_const(model_items[i])["command"]["caches"][c].Mark(),
        fmt::format("models[{}].command.caches[{}].variable", i, c),
        fmt::format("models '{}' and '{}' both locate a cache with {} (first at {}): installed together, "
                    "neither application would find its cache (run both programs in one model's command, "
                    "or point each at a variable of its own)",
                    first->second.first->name, model.name, cache.variable, first->second.second->position)));
    }
  }
  return {};
}

// models: each read, names unique.
Status
read_models(const yaml::Source& source, const yaml::Map& top, const std::filesystem::path& base_directory,
            const ManifestInputs& inputs, Manifest& manifest)
{
  PW_ASSIGN(auto models_node, top.required("models"));
  PW_ASSIGN(auto model_items, yaml::read_list(source, models_node, "models", yaml::Emptiness::rejected));
  for (std::size_t i = 0; i < model_items.size(); ++i) {
    const auto path = yaml::index_path("models", i);
    PW_ASSIGN(auto model, read_model(source, model_items[i], path, base_directory, inputs.presets));
    if (const auto* first = manifest.find_model(model.name)) {
      return fail(yaml::error_at(
        source, std::as_const(model_items[i])["name"].Mark(), path + ".name",
        fmt::format("duplicate model name '{}' (first at {})", model.name, first->position.to_string())));
    }
    manifest.models.push_back(std::move(model));
  }
  return check_cache_variables(source, model_items, manifest);
}

// precisions: required when a model runs once per precision.
Status
read_precisions(const yaml::Source& source, const yaml::Map& top, const YAML::Node& root, Manifest& manifest)
{
  // Precisions matter only to a model that runs once per precision: a
  // built-in one, or a command that names {precision}. Without such a model
  // the key may be left out; the plan then makes one job per model, as it
  // does for a command that names none (plan.cpp), and that job's precision
  // is never seen.
  const auto needs_precision = std::find_if(manifest.models.begin(), manifest.models.end(), [](const ModelSpec& m) {
    return !m.command || m.command->uses_precision();
  });
  if (auto precisions_node = top.get("precisions")) {
    PW_ASSIGN(auto precision_names, yaml::read_unique_strings(source, *precisions_node, "precisions"));
    std::vector<std::string> known_precisions;
    for (const auto precision : model::k_precisions) {
      known_precisions.emplace_back(precision_name(precision));
    }
    for (std::size_t i = 0; i < precision_names.size(); ++i) {
      const auto precision = parse_precision(precision_names[i]);
      if (!precision) {
        return fail(
          yaml::error_at(source, std::as_const(*precisions_node)[i].Mark(), yaml::index_path("precisions", i),
                         fmt::format("unknown precision '{}' (known: {}){}", precision_names[i],
                                     model::precision_names(), did_you_mean(precision_names[i], known_precisions))));
      }
      manifest.precisions.push_back(*precision);
    }
  } else if (needs_precision != manifest.models.end()) {
    return fail(yaml::error_at(source, root.Mark(), "precisions",
                               fmt::format("required: model '{}' (at {}) {}, so the manifest must list the "
                                           "precisions to build (e.g. precisions: [fp16])",
                                           needs_precision->name, needs_precision->position.to_string(),
                                           needs_precision->command ? "names {precision} in its command"
                                                                    : "is a built-in model, run once per precision")));
  } else {
    manifest.precisions.push_back(model::Precision::fp32); // one job per model; its precision is never seen
  }
  return {};
}

Status
read_shapes(const yaml::Source& source, const yaml::Map& top, Manifest& manifest)
{
  if (auto shapes_node = top.get("shapes")) {
    PW_ASSIGN(auto shapes,
              yaml::Map::read(source, *shapes_node, "shapes", {"batch_sizes", "prefill_lengths", "decode_steps"}));
    if (auto node = shapes.get("batch_sizes")) {
      PW_ASSIGN(auto values, yaml::read_unique_integers(source, *node, "shapes.batch_sizes", 1, 4096));
      manifest.shapes.batch_sizes.assign(values.begin(), values.end());
    }
    if (auto node = shapes.get("prefill_lengths")) {
      PW_ASSIGN(auto values, yaml::read_unique_integers(source, *node, "shapes.prefill_lengths", 1, 1 << 20));
      manifest.shapes.prefill_lengths.assign(values.begin(), values.end());
    }
    if (auto node = shapes.get("decode_steps")) {
      PW_ASSIGN(auto value, yaml::read_integer(source, *node, "shapes.decode_steps", 0, 1 << 20));
      manifest.shapes.decode_steps = static_cast<int>(value);
    }
  }
  return {};
}

Status
read_coverage(const yaml::Source& source, const yaml::Map& top, Manifest& manifest)
{
  if (auto coverage_node = top.get("coverage")) {
    PW_ASSIGN(auto coverage, yaml::read_string(source, *coverage_node, "coverage"));
    if (coverage == "representative") {
      manifest.coverage = model::Coverage::representative;
    } else if (coverage == "full") {
      manifest.coverage = model::Coverage::full;
    } else {
      static const std::vector<std::string> names{"representative", "full"};
      return fail(yaml::error_at(source, coverage_node->Mark(), "coverage",
                                 fmt::format("unknown coverage '{}' (one of: representative, full){}", coverage,
                                             did_you_mean(coverage, names))));
    }
  }
  return {};
}

// targets[i].profile: an Intel target's key profile, measured on one of its PCI ids.
Status
read_target_profile(const yaml::Source& source, const YAML::Node& profile_node, const std::string& profile_path,
                    const Target& target, const std::filesystem::path& base_directory, Manifest& manifest)
{
  const std::string& name = target.name;
  PW_ASSIGN(auto file, yaml::read_string(source, profile_node, profile_path));
  if (target.vendor != Vendor::intel) {
    return fail(yaml::error_at(source, profile_node.Mark(), profile_path,
                               fmt::format("target '{}' is not an Intel GPU: a key profile holds the inputs of "
                                           "Intel's driver caches (`prewarm intel-profile`)",
                                           name)));
  }
  const std::filesystem::path given(file);
  const auto resolved = given.is_absolute() ? given : (base_directory / given).lexically_normal();
  auto profile = load_intel_profile(resolved);
  if (!profile) {
    return fail(yaml::error_at(source, profile_node.Mark(), profile_path, profile.error().message()));
  }
  if (profile->target != name) {
    return fail(yaml::error_at(
      source, profile_node.Mark(), profile_path,
      fmt::format("{} is the profile of target '{}', not of '{}'", resolved.string(), profile->target, name)));
  }
  if (const auto& id = profile->device_id.value; std::ranges::find(target.pci_ids, id) == target.pci_ids.end()) {
    return fail(yaml::error_at(
      source, profile_node.Mark(), profile_path,
      fmt::format("{} was measured on PCI id {}, which target '{}' does not list ({})", resolved.string(), id, name,
                  target.pci_ids.empty() ? "none" : fmt::format("{}", fmt::join(target.pci_ids, ", ")))));
  }
  manifest.target_profiles.emplace(name, std::move(*profile));
  return {};
}

// targets: registry names (or {name, profile}), unique.
Status
read_targets(const yaml::Source& source, const yaml::Map& top, const std::filesystem::path& base_directory,
             const ManifestInputs& inputs, Manifest& manifest)
{
  PW_ASSIGN(auto targets_node, top.required("targets"));
  PW_ASSIGN(auto target_items, yaml::read_list(source, targets_node, "targets", yaml::Emptiness::rejected));
  const auto target_names = inputs.registry.names();
  std::map<std::string, YAML::Mark, std::less<>> seen_targets;
  for (std::size_t i = 0; i < target_items.size(); ++i) {
    const auto path = yaml::index_path("targets", i);
    // NAME, or {name: NAME, profile: FILE}. (A YAML::Node assigned to
    // another takes its content: nodes are held in optionals, never reassigned.)
    const bool is_map = target_items[i].IsMap();
    std::optional<YAML::Node> name_node;
    std::optional<YAML::Node> profile_node;
    if (is_map) {
      PW_ASSIGN(auto entry, yaml::Map::read(source, target_items[i], path, {"name", "profile"}));
      PW_ASSIGN(auto required_name, entry.required("name"));
      name_node.emplace(required_name);
      profile_node = entry.get("profile");
    } else {
      name_node.emplace(target_items[i]);
    }
    const auto name_path = is_map ? yaml::join_path(path, "name") : path;
    PW_ASSIGN(auto name, yaml::read_string(source, *name_node, name_path));
    const Target* target = inputs.registry.find(name);
    if (target == nullptr) {
      return fail(yaml::error_at(source, name_node->Mark(), name_path,
                                 fmt::format("unknown target '{}'{} (`prewarm targets` lists them; registry {})", name,
                                             did_you_mean(name, target_names), inputs.registry.source_name())));
    }
    if (const auto first = seen_targets.find(name); first != seen_targets.end()) {
      return fail(yaml::error_at(
        source, name_node->Mark(), name_path,
        fmt::format("duplicate '{}' (first at {}:{})", name, first->second.line + 1, first->second.column + 1)));
    }
    seen_targets.emplace(name, name_node->Mark());
    if (profile_node) {
      PW_TRY(read_target_profile(source, *profile_node, yaml::join_path(path, "profile"), *target, base_directory,
                                 manifest));
    }
    manifest.targets.push_back(std::move(name));
  }
  return {};
}

Status
read_bundle_section(const yaml::Source& source, const yaml::Map& top, Manifest& manifest)
{
  if (auto bundle_node = top.get("bundle")) {
    PW_ASSIGN(auto bundle, yaml::Map::read(source, *bundle_node, "bundle", {"channel", "expires", "serial"}));
    if (auto node = bundle.get("channel")) {
      PW_ASSIGN(manifest.bundle.channel, yaml::read_string(source, *node, "bundle.channel"));
      static const std::regex channel("[A-Za-z0-9][A-Za-z0-9._/-]{0,127}");
      if (!std::regex_match(manifest.bundle.channel, channel)) {
        return fail(yaml::error_at(
          source, node->Mark(), "bundle.channel",
          fmt::format("'{}' is not a valid channel (letters, digits, '.', '_', '/', '-')", manifest.bundle.channel)));
      }
    }
    if (auto node = bundle.get("expires")) {
      PW_ASSIGN(manifest.bundle.expires, yaml::read_duration(source, *node, "bundle.expires"));
      manifest.bundle.expires_text = node->Scalar();
    }
    if (auto node = bundle.get("serial")) {
      PW_ASSIGN(auto serial,
                yaml::read_integer(source, *node, "bundle.serial", 1, std::numeric_limits<std::int64_t>::max()));
      manifest.bundle.serial = static_cast<std::uint64_t>(serial);
    }
  }
  return {};
}

} // namespace

Result<Manifest>
parse_manifest(std::string_view text, std::string source_name, std::filesystem::path base_directory,
               const ManifestInputs& inputs)
{
  const yaml::Source source{std::move(source_name)};
  PW_ASSIGN(auto root, yaml::load(source, text));
  PW_ASSIGN(auto top, yaml::Map::read(source, root, "",
                                      {"version", "models", "precisions", "shapes", "coverage", "targets", "bundle"}));
  Manifest manifest;
  manifest.source_name = source.name;
  manifest.bytes_sha256 = sha256_hex(text);
  manifest.base_directory = base_directory;

  PW_ASSIGN(auto version_node, top.required("version"));
  PW_TRY(yaml::read_integer(source, version_node, "version", 1, 1));

  PW_TRY(read_models(source, top, base_directory, inputs, manifest));
  PW_TRY(read_precisions(source, top, root, manifest));
  PW_TRY(read_shapes(source, top, manifest));
  PW_TRY(read_coverage(source, top, manifest));
  PW_TRY(read_targets(source, top, base_directory, inputs, manifest));
  PW_TRY(read_bundle_section(source, top, manifest));
  return manifest;
}

Result<Manifest>
load_manifest_file(const std::filesystem::path& path, const ManifestInputs& inputs)
{
  PW_ASSIGN_CTX(auto text, fmt::format("reading manifest {}", path.string()), read_input_file(path.string(), 4 << 20));
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec);
  const auto base = ec ? path.parent_path() : absolute.parent_path();
  return parse_manifest(text, path.string(), base, inputs);
}

std::string_view
default_manifest_text()
{
  return find_embedded(manifests::embedded_files(), "default.yaml").value_or(std::string_view{});
}

Result<Manifest>
load_default_manifest(const ManifestInputs& inputs)
{
  const auto text = default_manifest_text();
  if (text.empty()) {
    return fail(Errc::internal, "default.yaml is not embedded in this binary");
  }
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  return parse_manifest(text, "<embedded default.yaml>", ec ? std::filesystem::path{} : cwd, inputs);
}

} // namespace prewarm::manifest
