// SPDX-License-Identifier: Apache-2.0
#include "registry/image_reference.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

#include <regex>

namespace prewarm::registry {

namespace {

bool
is_valid_repository(std::string_view repository)
{
  static const std::regex pattern("[a-z0-9]+((\\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\\.|_|__|-+)[a-z0-9]+)*)*");
  return repository.size() <= 255 && std::regex_match(repository.begin(), repository.end(), pattern);
}

bool
is_valid_tag(std::string_view tag)
{
  static const std::regex pattern("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
  return std::regex_match(tag.begin(), tag.end(), pattern);
}

bool
is_valid_registry(std::string_view host)
{
  static const std::regex pattern("([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?");
  return !host.empty() && std::regex_match(host.begin(), host.end(), pattern);
}

} // namespace

bool
is_sha256_digest(std::string_view text)
{
  return text.size() == 71 && text.starts_with("sha256:") && is_lower_hex(text.substr(7), 64);
}

bool
looks_like_registry_reference(std::string_view text)
{
  if (text.starts_with(k_oci_scheme) || text.find('@') != std::string_view::npos) {
    return true; // a digest of any algorithm: parse_image_reference() names what is wrong with it
  }
  // REGISTRY[:PORT]/REPO[:TAG]: a port, or a tag after the last slash. A
  // relative directory ("./x", "dist.v1/x") has neither.
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || text.starts_with('.')) {
    return false;
  }
  const auto host = text.substr(0, slash);
  const bool port = host.find(':') != std::string_view::npos;
  const auto last = text.rfind('/');
  const bool tag = text.find(':', last) != std::string_view::npos;
  return (port || tag) && is_valid_registry(host);
}

std::string
ImageReference::to_string() const
{
  std::string out = registry + "/" + repository;
  if (!tag.empty()) {
    out += ":" + tag;
  }
  if (!digest.empty()) {
    out += "@" + digest;
  }
  return out;
}

ImageReference
ImageReference::with_digest(std::string new_digest) const
{
  ImageReference pinned = *this;
  pinned.tag.clear();
  pinned.digest = std::move(new_digest);
  return pinned;
}

Result<ImageReference>
parse_image_reference(std::string_view text)
{
  const auto bad = [&](std::string_view why) {
    return fail(Errc::usage,
                fmt::format("image reference {}: {} (expected REGISTRY/REPOSITORY[:TAG][@sha256:HEX], e.g. "
                            "127.0.0.1:5000/bundles/app@sha256:...)",
                            in_quotes(text), why),
                "E_REFERENCE");
  };
  std::string_view rest = text;
  if (rest.starts_with(k_oci_scheme)) {
    rest.remove_prefix(k_oci_scheme.size());
  }
  ImageReference ref;
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    ref.digest = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
    if (!is_sha256_digest(ref.digest)) {
      return bad("the digest is not sha256: followed by 64 lowercase hex digits");
    }
  }
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) {
    return bad("no registry host before the repository");
  }
  ref.registry = std::string(rest.substr(0, slash));
  rest = rest.substr(slash + 1);
  if (!is_valid_registry(ref.registry)) {
    return bad(fmt::format("{} is not a registry host[:port]", in_quotes(ref.registry)));
  }
  // A tag's colon comes after the last slash (the registry's port is gone already).
  if (const auto colon = rest.rfind(':'); colon != std::string_view::npos && rest.find('/', colon) == std::string_view::npos) {
    ref.tag = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
    if (!is_valid_tag(ref.tag)) {
      return bad(fmt::format("{} is not a valid tag", in_quotes(ref.tag)));
    }
  }
  ref.repository = std::string(rest);
  if (!is_valid_repository(ref.repository)) {
    return bad(fmt::format("{} is not a valid repository name (lowercase components separated by '/')",
                           in_quotes(ref.repository)));
  }
  return ref;
}

Result<ImageReference>
parse_pinned_reference(std::string_view text)
{
  PW_ASSIGN(auto ref, parse_image_reference(text));
  if (ref.digest.empty()) {
    return fail(Errc::usage,
                fmt::format("image reference {} is not pinned by digest: the runtime installs only REF@sha256:... "
                            "(`prewarm push` prints the digest)",
                            in_quotes(text)),
                "E_UNPINNED");
  }
  return ref;
}

} // namespace prewarm::registry
