// SPDX-License-Identifier: Apache-2.0
#include "layer/program_keys.hpp"

#include "base/digest.hpp"
#include "layer/device_identity.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::layer {
namespace {

std::string
spec_constant_field(const std::vector<SpecConstant>& constants)
{
  auto sorted = constants;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::string field;
  for (const auto& c : sorted) {
    field += fmt::format("{}{}={}", field.empty() ? "" : ",", c.id, sha256_hex(c.value));
  }
  return field;
}

KeyFields
payload_fields(const TrackedProgram& tracked)
{
  KeyFields fields;
  if (!tracked.spec_constants.empty()) {
    fields.emplace_back("spec-constants", spec_constant_field(tracked.spec_constants));
  }
  return fields;
}

const store::IncludeSearch&
include_search()
{
  // Read once: the environment paths are the process's, and the compilers
  // inside it read them (if at all) at their start. Leaked on purpose (see
  // layer_settings.cpp).
  static const auto* const search = new store::IncludeSearch(store::default_include_search());
  return *search;
}

} // namespace

std::vector<store::ProgramKey>
build_keys(const TrackedProgram& tracked, const std::vector<cl_device_id>& devices, std::string_view stage, std::string_view options,
           const KeyFields& more)
{
  std::vector<store::ProgramKey> keys;
  for (const auto device : devices) {
    auto fields = payload_fields(tracked);
    fields.insert(fields.end(), more.begin(), more.end());
    keys.push_back(layer_key(device, stage, tracked.kind, tracked.payload_sha256, options, std::move(fields)));
  }
  return keys;
}

store::IncludeDigest
source_includes(const TrackedProgram& tracked, std::string_view options, const std::vector<store::EmbeddedHeader>& embedded)
{
  if (tracked.kind != store::SourceKind::source) {
    return {};
  }
  return store::digest_includes(tracked.payload, options, include_search(), embedded);
}

bool
includes_unchanged(const TrackedProgram& tracked)
{
  if (tracked.kind != store::SourceKind::source) {
    return true;
  }
  std::vector<store::EmbeddedHeader> embedded;
  for (const auto& [name, source] : tracked.embedded_headers) {
    embedded.push_back({name, source});
  }
  const auto now = source_includes(tracked, tracked.include_options, embedded);
  return now.complete && (now.any ? now.digest() : std::string{}) == tracked.includes_digest;
}

} // namespace prewarm::layer
