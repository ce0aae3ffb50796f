// SPDX-License-Identifier: Apache-2.0
#include "registry/oci_document.hpp"

#include "registry/image_reference.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace prewarm::registry {

namespace {

using nlohmann::json;

Error
bad(std::string_view document, std::string_view field, std::string_view why)
{
  return Error(Errc::verify, fmt::format("{}: {}: {}", document, field, why), "E_OCI_FORMAT");
}

Result<std::string>
string_field(const json& object, const char* key, std::string_view document, std::string_view where, bool required)
{
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) {
      return fail(bad(document, fmt::format("{}{}", where, key), "missing"));
    }
    return std::string();
  }
  if (!it->is_string()) {
    return fail(bad(document, fmt::format("{}{}", where, key), "not a string"));
  }
  return it->get<std::string>();
}

Result<std::map<std::string, std::string>>
annotations_of(const json& object, std::string_view document, std::string_view where)
{
  std::map<std::string, std::string> out;
  const auto it = object.find("annotations");
  if (it == object.end()) {
    return out;
  }
  if (!it->is_object()) {
    return fail(bad(document, fmt::format("{}annotations", where), "not an object"));
  }
  for (const auto& [key, value] : it->items()) {
    if (!value.is_string()) {
      return fail(bad(document, fmt::format("{}annotations.{}", where, key), "not a string"));
    }
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

Result<Descriptor>
descriptor_of(const json& object, std::string_view document, const std::string& where)
{
  if (!object.is_object()) {
    return fail(bad(document, where, "not an object"));
  }
  const auto prefix = where + ".";
  Descriptor d;
  PW_ASSIGN(d.media_type, string_field(object, "mediaType", document, prefix, true));
  PW_ASSIGN(d.digest, string_field(object, "digest", document, prefix, true));
  PW_ASSIGN(d.artifact_type, string_field(object, "artifactType", document, prefix, false));
  if (!is_sha256_digest(d.digest)) {
    return fail(bad(document, prefix + "digest", "not sha256: followed by 64 lowercase hex digits"));
  }
  const auto size = object.find("size");
  if (size == object.end() || !size->is_number_unsigned()) {
    return fail(bad(document, prefix + "size", "missing or not a non-negative integer"));
  }
  d.size = size->get<std::uint64_t>();
  PW_ASSIGN(d.annotations, annotations_of(object, document, prefix));
  return d;
}

Result<json>
parse_object(std::string_view text, std::string_view document)
{
  if (text.size() > k_max_oci_document_bytes) {
    return fail(Errc::verify, fmt::format("{}: {} bytes, more than the {} allowed", document, text.size(),
                                          k_max_oci_document_bytes),
                "E_LIMIT");
  }
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return fail(bad(document, "(document)", "not JSON"));
  }
  if (!value.is_object()) {
    return fail(bad(document, "(document)", "not a JSON object"));
  }
  const auto version = value.find("schemaVersion");
  if (version == value.end() || !version->is_number_unsigned() || version->get<std::uint64_t>() != 2) {
    return fail(bad(document, "schemaVersion", "must be 2"));
  }
  return value;
}

} // namespace

Result<OciManifest>
parse_oci_manifest(std::string_view text)
{
  constexpr std::string_view document = "OCI manifest";
  PW_ASSIGN(const auto value, parse_object(text, document));
  OciManifest m;
  PW_ASSIGN(m.media_type, string_field(value, "mediaType", document, "", false));
  if (!m.media_type.empty() && m.media_type != k_image_manifest_type && m.media_type != k_docker_manifest_type) {
    return fail(bad(document, "mediaType", fmt::format("{} is not an image manifest", m.media_type)));
  }
  const auto config = value.find("config");
  if (config == value.end()) {
    return fail(bad(document, "config", "missing"));
  }
  PW_ASSIGN(m.config, descriptor_of(*config, document, "config"));
  PW_ASSIGN(m.artifact_type, string_field(value, "artifactType", document, "", false));
  if (m.artifact_type.empty()) {
    m.artifact_type = m.config.media_type;
  }
  const auto layers = value.find("layers");
  if (layers == value.end() || !layers->is_array()) {
    return fail(bad(document, "layers", "missing or not an array"));
  }
  for (std::size_t i = 0; i < layers->size(); ++i) {
    PW_ASSIGN(auto layer, descriptor_of((*layers)[i], document, fmt::format("layers[{}]", i)));
    m.layers.push_back(std::move(layer));
  }
  if (const auto subject = value.find("subject"); subject != value.end()) {
    PW_ASSIGN(m.subject, descriptor_of(*subject, document, "subject"));
  }
  PW_ASSIGN(m.annotations, annotations_of(value, document, ""));
  return m;
}

Result<OciIndex>
parse_oci_index(std::string_view text)
{
  constexpr std::string_view document = "OCI image index";
  PW_ASSIGN(const auto value, parse_object(text, document));
  PW_ASSIGN(const auto media_type, string_field(value, "mediaType", document, "", false));
  if (!media_type.empty() && media_type != k_image_index_type && media_type != k_docker_list_type) {
    return fail(bad(document, "mediaType", fmt::format("{} is not an image index", media_type)));
  }
  const auto manifests = value.find("manifests");
  if (manifests == value.end() || !manifests->is_array()) {
    return fail(bad(document, "manifests", "missing or not an array"));
  }
  OciIndex index;
  for (std::size_t i = 0; i < manifests->size(); ++i) {
    PW_ASSIGN(auto d, descriptor_of((*manifests)[i], document, fmt::format("manifests[{}]", i)));
    index.manifests.push_back(std::move(d));
  }
  return index;
}

Result<Descriptor>
single_layer(const OciManifest& manifest, std::string_view media_type)
{
  const Descriptor* found = nullptr;
  for (const auto& layer : manifest.layers) {
    if (layer.media_type == media_type) {
      if (found != nullptr) {
        return fail(bad("OCI manifest", "layers", fmt::format("more than one layer of type {}", media_type)));
      }
      found = &layer;
    }
  }
  if (found == nullptr) {
    return fail(bad("OCI manifest", "layers",
                    fmt::format("no layer of type {} (artifactType {}: is this a prewarm bundle?)", media_type,
                                manifest.artifact_type)));
  }
  return *found;
}

std::string
referrers_tag(std::string_view digest)
{
  std::string tag(digest);
  if (const auto colon = tag.find(':'); colon != std::string::npos) {
    tag[colon] = '-';
  }
  return tag;
}

} // namespace prewarm::registry
