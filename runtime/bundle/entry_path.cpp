// SPDX-License-Identifier: Apache-2.0
#include "bundle/entry_path.hpp"

#include "base/encoding.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/custom_cache.hpp"
#include "bundle/manifest_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace prewarm::bundle {

using manifest_text::is_component;

Status
check_entry_path_limits(std::string_view path, std::size_t max_length, std::size_t max_depth)
{
  if (path.size() > max_length) {
    return fail(Errc::verify, fmt::format("path {}: {} bytes long (at most {})", in_quotes(path), path.size(), max_length),
                "E_PATH");
  }
  // Components after KIND: one per separator ("//" is the component rule's).
  const auto depth = static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
  if (depth > max_depth) {
    return fail(Errc::verify, fmt::format("path {}: {} components deep (at most {})", in_quotes(path), depth, max_depth),
                "E_PATH");
  }
  return {};
}

Status
validate_entry_path(std::string_view path, KindOnlyPath kind_only, std::size_t max_length, std::size_t max_depth)
{
  const auto bad = [&](std::string_view why) {
    return fail(Errc::verify, fmt::format("path {}: {}", in_quotes(path), why), "E_PATH");
  };
  if (path.empty()) {
    return bad("empty");
  }
  // First: it bounds the work below.
  PW_TRY(check_entry_path_limits(path, max_length, max_depth));
  const auto kind = kind_of(path);
  if (kind != k_custom_kind && !parse_cache_kind(kind)) {
    return bad(fmt::format("does not start with a known cache kind ({} is not one)", in_quotes(kind)));
  }
  if (const auto custom = custom_cache_of(path); !custom.empty()) {
    if (auto named = check_custom_cache_name(custom); !named) {
      return bad(named.error().message());
    }
  }
  if (kind.size() == path.size()) {
    if (kind_only == KindOnlyPath::refused) {
      return bad("names a cache kind directory, not a file in it");
    }
    return {};
  }
  std::string_view rest = path.substr(kind.size() + 1);
  while (true) {
    const auto slash = rest.find('/');
    const auto component = rest.substr(0, slash);
    if (component.empty()) {
      return bad("empty component (\"//\" or a trailing \"/\")");
    }
    if (component == "." || component == "..") {
      return bad(fmt::format("component {} is not allowed", in_quotes(component)));
    }
    if (!is_component(component)) {
      return bad(fmt::format("component {} is not 1..255 bytes of printable UTF-8 (no control character)", in_quotes(component)));
    }
    if (slash == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(slash + 1);
  }
  return {};
}

std::string_view
kind_of(std::string_view entry_path)
{
  return entry_path.substr(0, entry_path.find('/'));
}

std::string_view
tree_of(std::string_view entry_path)
{
  const auto kind = kind_of(entry_path);
  const auto custom = custom_cache_of(entry_path);
  if (custom.empty()) {
    return kind;
  }
  return entry_path.substr(0, kind.size() + 1 + custom.size());
}

Result<std::string>
resolve_link_target(std::string_view link_path, std::string_view target)
{
  const auto bad = [&](std::string_view why) {
    return fail(Errc::verify, fmt::format("link {} -> {}: {}", in_quotes(link_path), in_quotes(target), why), "E_PATH");
  };
  if (target.empty()) {
    return bad("empty target");
  }
  if (target.size() > k_max_path_length) {
    return bad(fmt::format("target {} bytes long (at most {})", target.size(), k_max_path_length));
  }
  if (target.front() == '/') {
    return bad("absolute target (a link must stay inside its cache, relative to itself)");
  }
  const auto tree = tree_of(link_path);
  if (link_path.size() <= tree.size() + 1) {
    return bad("the link is the cache directory itself");
  }
  // The components below the tree of the directory holding the link, then
  // the target's walk from there.
  std::vector<std::string_view> parts;
  for (std::string_view rest = link_path.substr(tree.size() + 1);;) {
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos) {
      break; // the link's own name
    }
    parts.push_back(rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
  }
  bool descending = false; // ".." only leads: one spelling, and no step through a name the walk just made
  for (std::string_view rest = target;;) {
    const auto slash = rest.find('/');
    const auto component = rest.substr(0, slash);
    if (component.empty() || component == ".") {
      return bad("empty or \".\" component (a target has one spelling: no \"//\", \"./\" or trailing \"/\")");
    }
    if (component == "..") {
      if (descending) {
        return bad("\"..\" after a name (a target climbs first, then descends)");
      }
      if (parts.empty()) {
        return bad("climbs out of its cache (a link must resolve inside the cache it is in)");
      }
      parts.pop_back();
    } else if (!is_component(component)) {
      return bad(fmt::format("component {} is not 1..255 bytes of printable UTF-8", in_quotes(component)));
    } else {
      descending = true;
      parts.push_back(component);
    }
    if (slash == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(slash + 1);
  }
  if (parts.empty()) {
    return bad("names its cache's own directory, not a file in it");
  }
  std::string resolved(tree);
  for (const auto part : parts) {
    resolved += '/';
    resolved += part;
  }
  return resolved;
}

namespace {

// Bytes written as themselves; every other byte is "%XX". "/" separates.
bool
is_safe_path_byte(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '+' || c == '-' || c == '/';
}

} // namespace

std::string
encode_entry_path(std::string_view path)
{
  std::string out;
  out.reserve(path.size());
  for (const char c : path) {
    if (is_safe_path_byte(c)) {
      out.push_back(c);
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
  }
  return out;
}

std::optional<std::string>
decode_entry_path(std::string_view encoded)
{
  const auto upper_hex = [](char h) { return (h >= '0' && h <= '9') || (h >= 'A' && h <= 'F'); };
  std::string out;
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (is_safe_path_byte(encoded[i])) {
      out.push_back(encoded[i]);
      continue;
    }
    if (encoded[i] != '%' || i + 2 >= encoded.size() || !upper_hex(encoded[i + 1]) || !upper_hex(encoded[i + 2])) {
      return std::nullopt;
    }
    unsigned value = 0;
    std::from_chars(encoded.data() + i + 1, encoded.data() + i + 3, value, 16);
    const auto byte = static_cast<char>(value);
    if (is_safe_path_byte(byte)) {
      return std::nullopt; // a second spelling of a byte written as itself
    }
    out.push_back(byte);
    i += 2;
  }
  return out;
}

} // namespace prewarm::bundle
