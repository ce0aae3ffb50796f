// SPDX-License-Identifier: Apache-2.0
// The origin of a registry URL, to which the client binds credentials and
// redirects (registry_client.cpp), and what counts as a loopback host (plain
// http and unverified TLS are for those only). Internal to prewarm_registry.
#pragma once

#include "base/error.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace prewarm::registry {

// scheme://host:port of a URL, lowercase, the port always written out: the
// unit credentials are bound to.
struct Origin
{
  std::string scheme;
  std::string host;
  std::string port;
  bool operator==(const Origin&) const = default;
  std::string to_string() const { return fmt::format("{}://{}:{}", scheme, host, port); }
};

Result<Origin> parse_origin(const std::string& url);

// host[:port] or [v6][:port] -> the host alone.
std::string host_part(std::string_view host);

// An IPv4 address in 127/8 or ::1, written as a literal.
bool is_loopback_literal(std::string_view host);

} // namespace prewarm::registry
