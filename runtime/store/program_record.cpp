// SPDX-License-Identifier: Apache-2.0
#include "store/program_record.hpp"

#include "base/digest.hpp"
#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <system_error>

namespace prewarm::store {
namespace {

constexpr std::string_view k_binary_digest_field = "binary-sha256 ";

// One value per line: a newline inside a value must not start a new field.
std::string
escape_value(std::string_view value)
{
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

std::string
unescape_value(std::string_view value)
{
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) {
      const char next = value[++i];
      out += next == 'n' ? '\n' : next == 'r' ? '\r' : next;
    } else {
      out += value[i];
    }
  }
  return out;
}

// The value of the first "name value" line of a meta text, unescaped.
std::optional<std::string>
meta_field(std::string_view meta, std::string_view name)
{
  while (!meta.empty()) {
    const auto nl = meta.find('\n');
    const auto line = meta.substr(0, nl);
    if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ' ') {
      return unescape_value(line.substr(name.size() + 1));
    }
    if (nl == std::string_view::npos) {
      break;
    }
    meta.remove_prefix(nl + 1);
  }
  return std::nullopt;
}

std::string
property(const opencl::DeviceRef& device, std::string_view key)
{
  const auto it = device.properties.find(key);
  return it == device.properties.end() ? std::string{} : it->second;
}

std::string
meta_text(const ProgramKey& key, std::string_view binary)
{
  return key.canonical_text() + std::string(k_binary_digest_field) + sha256_hex(binary) + "\n";
}

std::filesystem::path
record_path(const std::filesystem::path& store, std::string_view key, std::string_view extension)
{
  return store / std::string(key.substr(0, 2)) / fmt::format("{}{}", key, extension);
}

} // namespace

ProgramKey
ProgramKey::for_device(const opencl::DeviceRef& device, std::string_view source, std::string_view options, SourceKind kind)
{
  ProgramKey key;
  key.source_sha256 = sha256_hex(source);
  key.source_kind = kind;
  key.options = std::string(options);
  key.platform = property(device, prop::opencl_platform);
  key.platform_version = property(device, prop::opencl_platform_version);
  key.device = property(device, prop::opencl_device);
  key.device_version = property(device, prop::opencl_device_version);
  key.driver = property(device, prop::opencl_driver);
  key.vendor = property(device, prop::vendor);
  return key;
}

std::string
ProgramKey::canonical_text() const
{
  auto text = fmt::format("format {}\n"
                          "source-sha256 {}\n"
                          "source-kind {}\n"
                          "options {}\n"
                          "platform {}\n"
                          "platform-version {}\n"
                          "device {}\n"
                          "device-version {}\n"
                          "driver {}\n"
                          "vendor {}\n",
                          k_store_format,
                          escape_value(source_sha256),
                          source_kind == SourceKind::source ? "source" : "il",
                          escape_value(options),
                          escape_value(platform),
                          escape_value(platform_version),
                          escape_value(device),
                          escape_value(device_version),
                          escape_value(driver),
                          escape_value(vendor));
  for (const auto& [name, value] : extra) {
    // A name is a word: a space or newline in it would shift the fields.
    std::string safe_name = escape_value(name);
    std::replace(safe_name.begin(), safe_name.end(), ' ', '_');
    text += fmt::format("{} {}\n", safe_name, escape_value(value));
  }
  return text;
}

std::string
ProgramKey::digest() const
{
  return sha256_hex(canonical_text());
}

std::filesystem::path
record_binary_path(const std::filesystem::path& store, std::string_view key)
{
  return record_path(store, key, ".bin");
}

std::filesystem::path
record_meta_path(const std::filesystem::path& store, std::string_view key)
{
  return record_path(store, key, ".meta");
}

std::filesystem::path
record_source_path(const std::filesystem::path& store, std::string_view key)
{
  return record_path(store, key, ".source");
}

Result<std::string>
read_record(const std::filesystem::path& store, const ProgramKey& key)
{
  const auto digest = key.digest();
  const auto meta_path = record_meta_path(store, digest);
  std::error_code ec;
  if (!std::filesystem::exists(meta_path, ec)) {
    return fail(Errc::failed, fmt::format("no record {} in the store", digest), "E_STORE_ABSENT");
  }
  PW_ASSIGN(const auto meta, read_file(meta_path.string(), 1 << 20));
  const auto expected_key = key.canonical_text();
  if (!meta.starts_with(expected_key)) {
    return fail(Errc::verify, "the stored key text differs from this build's", "E_STORE_META");
  }
  std::string_view rest = std::string_view(meta).substr(expected_key.size());
  if (!rest.starts_with(k_binary_digest_field) || !rest.ends_with('\n')) {
    return fail(Errc::verify, "the meta file has no binary digest line", "E_STORE_META");
  }
  rest.remove_prefix(k_binary_digest_field.size());
  rest.remove_suffix(1);
  PW_ASSIGN(auto binary, read_file(record_binary_path(store, digest).string(), std::uint64_t{1} << 30));
  if (sha256_hex(binary) != rest) {
    return fail(Errc::verify, "the binary's SHA-256 differs from the one recorded in its meta file", "E_STORE_DIGEST");
  }
  return binary;
}

Status
write_record(const std::filesystem::path& store, const ProgramKey& key, std::string_view binary, std::string_view source)
{
  const auto digest = key.digest();
  const auto dir = record_binary_path(store, digest).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("program store: cannot create {}: {}", in_quotes(dir.string()), ec.message()));
  }
  if (!source.empty()) {
    PW_TRY_CTX("program store", write_file_atomic(record_source_path(store, digest), source, 0644, Durability::none));
  }
  // The binary first: a meta without its binary would be a rejection on
  // every load, a binary without its meta is just a miss.
  PW_TRY_CTX("program store", write_file_atomic(record_binary_path(store, digest), binary, 0644, Durability::none));
  PW_TRY_CTX("program store", write_file_atomic(record_meta_path(store, digest), meta_text(key, binary), 0644, Durability::none));
  return {};
}

Result<std::vector<RecordedSource>>
recorded_sources(const std::filesystem::path& store)
{
  namespace fs = std::filesystem;
  std::vector<fs::path> sources;
  std::error_code ec;
  if (!fs::is_directory(store, ec)) {
    return std::vector<RecordedSource>{};
  }
  // Two levels, <2 hex>/<key>.source: aot/ and anything else that is not a
  // record directory is skipped.
  PW_TRY_CTX("program store", for_each_entry(store, [&](const TreeEntry& entry) -> Result<WalkNext> {
    if (parent_of(entry.relative).empty()) {
      return entry.is_directory() && entry.name.size() == 2 ? WalkNext::descend : WalkNext::skip;
    }
    if (entry.is_regular_file() && fs::path(entry.name).extension() == ".source") {
      sources.push_back(store / entry.relative);
    }
    return WalkNext::skip;
  }));
  std::sort(sources.begin(), sources.end());
  std::vector<RecordedSource> out;
  std::set<std::pair<std::string, std::string>> seen; // (source sha256, options)
  for (const auto& path : sources) {
    const auto key = path.stem().string();
    auto meta = read_file(record_meta_path(store, key).string(), 1 << 20);
    auto source = read_file(path.string(), std::uint64_t{1} << 28);
    if (!meta || !source) {
      continue;
    }
    const auto sha = meta_field(*meta, "source-sha256");
    const auto options = meta_field(*meta, "options");
    if (sha != sha256_hex(*source) || !options || meta_field(*meta, "source-kind") != "source" ||
        meta_field(*meta, "stage").value_or("build") != "build") {
      continue;
    }
    if (!seen.emplace(*sha, *options).second) {
      continue;
    }
    out.push_back(RecordedSource{key, std::move(*source), *options});
  }
  return out;
}

} // namespace prewarm::store
