// SPDX-License-Identifier: Apache-2.0
#include "manifest/presets.hpp"

#include "manifest/architecture_reader.hpp"
#include "manifest/embedded_manifests.hpp"
#include "manifest/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace prewarm::manifest {
namespace {

constexpr std::int64_t k_int_max = std::numeric_limits<int>::max();

Result<int>
positive(const yaml::Map& map, std::string_view key)
{
  PW_ASSIGN(auto node, map.required(key));
  PW_ASSIGN(auto value, yaml::read_integer(map.source(), node, map.path_of(key), 1, k_int_max));
  return static_cast<int>(value);
}

Result<int>
non_negative(const yaml::Map& map, std::string_view key, int fallback)
{
  auto node = map.get(key);
  if (!node) {
    return fallback;
  }
  PW_ASSIGN(auto value, yaml::read_integer(map.source(), *node, map.path_of(key), 0, k_int_max));
  return static_cast<int>(value);
}

Result<double>
positive_number(const yaml::Map& map, std::string_view key, double fallback)
{
  auto node = map.get(key);
  if (!node) {
    return fallback;
  }
  PW_ASSIGN(auto value, yaml::read_number(map.source(), *node, map.path_of(key)));
  if (value <= 0) {
    return fail(yaml::error_at(map.source(), node->Mark(), map.path_of(key), "must be greater than 0"));
  }
  return value;
}

template<typename Enum>
Result<Enum>
choice(const yaml::Map& map,
       std::string_view key,
       Enum fallback,
       std::initializer_list<std::pair<std::string_view, Enum>> options)
{
  auto node = map.get(key);
  if (!node) {
    return fallback;
  }
  PW_ASSIGN(auto text, yaml::read_string(map.source(), *node, map.path_of(key)));
  std::vector<std::string> names;
  for (const auto& [name, value] : options) {
    if (name == text) {
      return value;
    }
    names.emplace_back(name);
  }
  return fail(yaml::error_at(map.source(), node->Mark(), map.path_of(key),
                             fmt::format("unknown value '{}' (one of: {}){}", text, fmt::join(names, ", "),
                                         did_you_mean(text, names))));
}

Error
inconsistent(const yaml::Map& map, std::string_view what)
{
  return yaml::error_at(map.source(), map.mark(), map.path(), what);
}

Result<model::DecoderArchitecture>
read_decoder(const yaml::Map& map)
{
  model::DecoderArchitecture d;
  PW_ASSIGN(d.hidden, positive(map, "hidden"));
  PW_ASSIGN(d.layers, positive(map, "layers"));
  PW_ASSIGN(d.heads, positive(map, "heads"));
  PW_ASSIGN(d.kv_heads, positive(map, "kv_heads"));
  PW_ASSIGN(d.head_dim, positive(map, "head_dim"));
  PW_ASSIGN(d.ffn, positive(map, "ffn"));
  PW_ASSIGN(d.vocab, positive(map, "vocab"));
  PW_ASSIGN(d.rope_theta, positive_number(map, "rope_theta", d.rope_theta));
  PW_ASSIGN(d.norm_eps, positive_number(map, "norm_eps", d.norm_eps));
  if (auto node = map.get("tied_embeddings")) {
    PW_ASSIGN(d.tied_embeddings, yaml::read_bool(map.source(), *node, map.path_of("tied_embeddings")));
  }
  using Norm = model::DecoderArchitecture::Norm;
  using Activation = model::DecoderArchitecture::Activation;
  PW_ASSIGN(d.norm, choice<Norm>(map, "norm", d.norm, {{"rmsnorm", Norm::rmsnorm}, {"layernorm", Norm::layernorm}}));
  PW_ASSIGN(d.activation,
            choice<Activation>(map, "activation", d.activation, {{"silu", Activation::silu}, {"gelu", Activation::gelu}}));
  if (static_cast<long long>(d.heads) * d.head_dim != d.hidden) {
    return fail(inconsistent(map, fmt::format("heads * head_dim ({} * {}) must equal hidden ({})", d.heads,
                                              d.head_dim, d.hidden)));
  }
  if (d.heads % d.kv_heads != 0) {
    return fail(inconsistent(map, fmt::format("heads ({}) must be a multiple of kv_heads ({})", d.heads, d.kv_heads)));
  }
  return d;
}

Result<model::CnnArchitecture>
read_cnn(const yaml::Map& map)
{
  model::CnnArchitecture c;
  PW_ASSIGN(auto input_node, map.required("input"));
  PW_ASSIGN(auto input, yaml::Map::read(map.source(), input_node, map.path_of("input"), {"width", "height", "channels"}));
  PW_ASSIGN(c.input_width, positive(input, "width"));
  PW_ASSIGN(c.input_height, positive(input, "height"));
  PW_ASSIGN(c.input_channels, positive(input, "channels"));
  PW_ASSIGN(c.classes, positive(map, "classes"));
  PW_ASSIGN(auto layers_node, map.required("layers"));
  PW_ASSIGN(auto layers, yaml::read_list(map.source(), layers_node, map.path_of("layers"), yaml::Emptiness::rejected));
  int width = c.input_width;
  int height = c.input_height;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string path = yaml::index_path(map.path_of("layers"), i);
    PW_ASSIGN(auto layer_map,
              yaml::Map::read(map.source(), layers[i], path, {"out_channels", "kernel", "stride", "padding", "pool"}));
    model::ConvLayer layer;
    PW_ASSIGN(layer.out_channels, positive(layer_map, "out_channels"));
    PW_ASSIGN(layer.kernel, positive(layer_map, "kernel"));
    if (layer_map.get("stride")) {
      PW_ASSIGN(layer.stride, positive(layer_map, "stride"));
    }
    PW_ASSIGN(layer.padding, non_negative(layer_map, "padding", layer.padding));
    PW_ASSIGN(layer.pool, non_negative(layer_map, "pool", layer.pool));
    width = (width + 2 * layer.padding - layer.kernel) / layer.stride + 1;
    height = (height + 2 * layer.padding - layer.kernel) / layer.stride + 1;
    if (layer.pool > 0) {
      width /= layer.pool;
      height /= layer.pool;
    }
    if (width < 1 || height < 1) {
      return fail(inconsistent(layer_map, fmt::format("the feature map shrinks to {}x{} here", width, height)));
    }
    c.layers.push_back(layer);
  }
  return c;
}

Result<model::GptqStackArchitecture>
read_gptq(const yaml::Map& map)
{
  model::GptqStackArchitecture g;
  PW_ASSIGN(g.group_size, positive(map, "group_size"));
  if (auto node = map.get("act_order")) {
    PW_ASSIGN(g.act_order, yaml::read_bool(map.source(), *node, map.path_of("act_order")));
  }
  PW_ASSIGN(auto layers_node, map.required("layers"));
  PW_ASSIGN(auto layers, yaml::read_list(map.source(), layers_node, map.path_of("layers"), yaml::Emptiness::rejected));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string path = yaml::index_path(map.path_of("layers"), i);
    PW_ASSIGN(auto layer_map, yaml::Map::read(map.source(), layers[i], path, {"in", "out"}));
    model::GptqLinear layer;
    PW_ASSIGN(layer.in_features, positive(layer_map, "in"));
    PW_ASSIGN(layer.out_features, positive(layer_map, "out"));
    if (!g.layers.empty() && g.layers.back().out_features != layer.in_features) {
      return fail(inconsistent(layer_map, fmt::format("in ({}) must equal the previous layer's out ({})",
                                                      layer.in_features, g.layers.back().out_features)));
    }
    if (layer.in_features % g.group_size != 0 || layer.in_features % 8 != 0) {
      return fail(inconsistent(layer_map, fmt::format("in ({}) must be a multiple of group_size ({}) and of 8",
                                                      layer.in_features, g.group_size)));
    }
    g.layers.push_back(layer);
  }
  return g;
}

} // namespace

Result<model::ModelArchitecture>
read_architecture(const yaml::Source& source, const YAML::Node& node, const std::string& path, std::string name)
{
  // The allowed keys depend on the type, so read the type first from a
  // permissive view, then re-read strictly.
  PW_ASSIGN(auto any, yaml::Map::read_any_keys(source, node, path));
  PW_ASSIGN(auto type_node, any.required("type"));
  PW_ASSIGN(auto type, yaml::read_string(source, type_node, any.path_of("type")));
  model::ModelArchitecture architecture;
  architecture.name = std::move(name);
  if (type == "decoder") {
    PW_ASSIGN(auto map, yaml::Map::read(source, node, path,
                                        {"type", "hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "vocab",
                                         "rope_theta", "norm_eps", "tied_embeddings", "norm", "activation"}));
    PW_ASSIGN(architecture.body, read_decoder(map));
  } else if (type == "cnn") {
    PW_ASSIGN(auto map, yaml::Map::read(source, node, path, {"type", "input", "layers", "classes"}));
    PW_ASSIGN(architecture.body, read_cnn(map));
  } else if (type == "gptq") {
    PW_ASSIGN(auto map, yaml::Map::read(source, node, path, {"type", "group_size", "act_order", "layers"}));
    PW_ASSIGN(architecture.body, read_gptq(map));
  } else {
    static const std::vector<std::string> types{"decoder", "cnn", "gptq"};
    return fail(yaml::error_at(source, type_node.Mark(), any.path_of("type"),
                               fmt::format("unknown architecture type '{}' (one of: decoder, cnn, gptq){}", type,
                                           did_you_mean(type, types))));
  }
  return architecture;
}

std::string_view
architecture_type(const model::ModelArchitecture& architecture)
{
  switch (architecture.body.index()) {
  case 0:
    return "decoder";
  case 1:
    return "cnn";
  default:
    return "gptq";
  }
}

Result<PresetLibrary>
PresetLibrary::parse(std::string_view text, std::string source_name)
{
  const yaml::Source source{std::move(source_name)};
  PW_ASSIGN(auto root, yaml::load(source, text));
  PW_ASSIGN(auto top, yaml::Map::read(source, root, "", {"version", "presets"}));
  PW_ASSIGN(auto version_node, top.required("version"));
  PW_TRY(yaml::read_integer(source, version_node, "version", 1, 1));
  PW_ASSIGN(auto presets_node, top.required("presets"));
  PW_ASSIGN(auto presets, yaml::Map::read_any_keys(source, presets_node, "presets"));
  PresetLibrary library;
  for (const auto& entry : presets.entries()) {
    PW_ASSIGN(auto architecture, read_architecture(source, entry.value, presets.path_of(entry.key), entry.key));
    library.m_presets.push_back(std::move(architecture));
  }
  return library;
}

Result<PresetLibrary>
PresetLibrary::embedded()
{
  const auto text = find_embedded(manifests::embedded_files(), "presets.yaml");
  if (!text) {
    return fail(Errc::internal, "presets.yaml is not embedded in this binary");
  }
  return parse(*text, "<embedded presets.yaml>");
}

const model::ModelArchitecture*
PresetLibrary::find(std::string_view name) const
{
  const auto it = std::find_if(m_presets.begin(), m_presets.end(), [&](const auto& p) { return p.name == name; });
  return it == m_presets.end() ? nullptr : &*it;
}

std::vector<std::string>
PresetLibrary::names() const
{
  std::vector<std::string> names;
  for (const auto& p : m_presets) {
    names.push_back(p.name);
  }
  return names;
}

} // namespace prewarm::manifest
