// SPDX-License-Identifier: Apache-2.0
#include "registry/registry_origin.hpp"

#include "base/encoding.hpp"
#include "registry/curl_library.hpp"
#include "registry/http_transfer.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>

#include <memory>

namespace prewarm::registry {

std::string
host_part(std::string_view host)
{
  if (host.starts_with('[')) {
    return std::string(host.substr(1, host.find(']') - 1));
  }
  if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
    return std::string(host.substr(0, colon));
  }
  return std::string(host);
}

bool
is_loopback_literal(std::string_view host)
{
  const auto bare = host_part(host);
  in_addr v4{};
  if (::inet_pton(AF_INET, bare.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  return ::inet_pton(AF_INET6, bare.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

Result<Origin>
parse_origin(const std::string& url)
{
  PW_ASSIGN(const auto* curl, curl_library());
  std::unique_ptr<CURLU, void (*)(CURLU*)> handle(curl->url(), curl->url_cleanup);
  if (!handle || curl->url_set(handle.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) {
    return fail(Errc::failed, fmt::format("{}: not a URL", in_quotes(url.substr(0, 200))),
                std::string(k_registry_error));
  }
  Origin origin;
  const auto part = [&](CURLUPart which, unsigned flags, std::string& out) {
    char* text = nullptr;
    if (curl->url_get(handle.get(), which, &text, flags) == CURLUE_OK && text != nullptr) {
      out = lowercase(text);
    }
    curl->free(text);
  };
  part(CURLUPART_SCHEME, 0, origin.scheme);
  part(CURLUPART_HOST, 0, origin.host);
  part(CURLUPART_PORT, CURLU_DEFAULT_PORT, origin.port);
  return origin;
}

} // namespace prewarm::registry
