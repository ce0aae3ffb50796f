// SPDX-License-Identifier: Apache-2.0
#include "registry/auth_challenge.hpp"

#include "base/encoding.hpp"
#include "registry/registry_client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace prewarm::registry {

namespace {

Error
bad_challenge(std::string_view header, std::string_view why)
{
  return Error(Errc::failed,
               fmt::format("the registry's authentication challenge {}: {}", in_quotes(header.substr(0, 200)), why),
               "E_AUTH");
}

bool
iequals(std::string_view a, std::string_view b)
{
  return std::ranges::equal(a, b, [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) ==
                                                              std::tolower(static_cast<unsigned char>(y)); });
}

} // namespace

Result<AuthChallenge>
parse_auth_challenge(std::string_view header)
{
  const auto text = trim(header);
  if (text.empty()) {
    return fail(bad_challenge(header, "a 401 without WWW-Authenticate"));
  }
  const auto space = text.find(' ');
  const auto scheme = text.substr(0, space);
  AuthChallenge challenge;
  if (iequals(scheme, "basic")) {
    challenge.scheme = AuthScheme::basic;
    return challenge;
  }
  if (!iequals(scheme, "bearer")) {
    return fail(bad_challenge(header, fmt::format("unsupported scheme {}", in_quotes(scheme))));
  }
  challenge.scheme = AuthScheme::bearer;
  std::string_view rest = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
  while (!rest.empty()) {
    rest = trim(rest, " \t,");
    const auto equals = rest.find('=');
    if (rest.empty() || equals == std::string_view::npos) {
      break;
    }
    const auto name = trim(rest.substr(0, equals));
    rest.remove_prefix(equals + 1);
    std::string value;
    if (rest.starts_with('"')) {
      std::size_t i = 1;
      for (; i < rest.size() && rest[i] != '"'; ++i) {
        if (rest[i] == '\\' && i + 1 < rest.size()) {
          ++i;
        }
        value += rest[i];
      }
      if (i >= rest.size()) {
        return fail(bad_challenge(header, "unterminated quoted value"));
      }
      rest.remove_prefix(i + 1);
    } else {
      const auto end = std::min(rest.find(','), rest.size());
      value = std::string(trim(rest.substr(0, end)));
      rest.remove_prefix(end);
    }
    if (iequals(name, "realm")) {
      challenge.realm = value;
    } else if (iequals(name, "service")) {
      challenge.service = value;
    } else if (iequals(name, "scope")) {
      std::string_view scopes = value;
      while (!scopes.empty()) {
        const auto end = std::min(scopes.find(' '), scopes.size());
        if (end > 0) {
          challenge.scopes.emplace_back(scopes.substr(0, end));
        }
        scopes.remove_prefix(std::min(end + 1, scopes.size()));
      }
    }
  }
  // Plain http only on this machine (a --plain-http test registry; the
  // client further requires the registry's own host): a password must not
  // cross a network in clear text.
  const auto authority = std::string_view(challenge.realm).substr(std::min<std::size_t>(7, challenge.realm.size()));
  const auto host = authority.substr(0, authority.find('/'));
  const bool loopback_http = challenge.realm.starts_with("http://") && host.find('@') == std::string_view::npos &&
                             is_loopback_host(host);
  if (!challenge.realm.starts_with("https://") && !loopback_http) {
    return fail(bad_challenge(header, "a Bearer challenge needs an https realm"));
  }
  return challenge;
}

} // namespace prewarm::registry
