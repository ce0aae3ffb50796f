// SPDX-License-Identifier: Apache-2.0
// The WWW-Authenticate header of a registry's 401 (RFC 7235 challenge, as the
// distribution spec's token authentication uses it):
//
//   challenge := scheme [ " " param ("," param)* ]
//   scheme    := "Basic" | "Bearer"           (case-insensitive)
//   param     := name "=" ( token | quoted-string )
//
//   Bearer realm="https://auth.example/token",service="registry.example",
//          scope="repository:team/app:pull"
//
// A scope parameter may hold several scopes separated by spaces. Only the
// first challenge of the header is read.
#pragma once

#include "base/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace prewarm::registry {

enum class AuthScheme { basic, bearer };

struct AuthChallenge
{
  AuthScheme scheme = AuthScheme::basic;
  std::string realm;
  std::string service;
  std::vector<std::string> scopes;
};

// Errc::failed E_AUTH for a missing header, an unknown scheme, or a Bearer
// challenge without an https realm.
Result<AuthChallenge> parse_auth_challenge(std::string_view header);

} // namespace prewarm::registry
