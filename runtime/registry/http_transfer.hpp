// SPDX-License-Identifier: Apache-2.0
// One libcurl transfer of the registry client (registry_client.cpp): the
// callbacks that fill an HttpResponse (a 2xx body into the request's sink or
// the response, bounded; an error body cut to what a message quotes; the
// headers of the last answer), the upload reader, and which of curl's errors
// are worth another attempt. Internal to prewarm_registry.
#pragma once

#include "base/error.hpp"
#include "registry/curl_library.hpp"
#include "registry/registry_client.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace prewarm::registry {

// What an error answer may cost: the excerpt quoted (300 characters) comes
// from here; the rest of the body is never read.
inline constexpr std::size_t k_max_error_body = 4 << 10;

std::string lowercase(std::string_view text);

struct Transfer
{
  const CurlLibrary* curl = nullptr;
  const HttpRequest* request = nullptr;
  HttpResponse* response = nullptr;
  CURL* handle = nullptr;
  std::optional<Error> sink_error;
  std::uint64_t received = 0; // of a 2xx body
  std::FILE* upload = nullptr;
  bool started = false;
  bool error_body_full = false; // the excerpt is kept: the rest is not read
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user);
std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user);
std::size_t on_upload(char* buffer, std::size_t size, std::size_t count, void* user);

// Whether a failed transfer may succeed when tried again (network, TLS
// handshake, a cut-off answer).
bool is_transient(CURLcode code);

} // namespace prewarm::registry
