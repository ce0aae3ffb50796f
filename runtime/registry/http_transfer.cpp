// SPDX-License-Identifier: Apache-2.0
#include "registry/http_transfer.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace prewarm::registry {

std::string
lowercase(std::string_view text)
{
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

namespace {

bool
is_success(long status)
{
  return status >= 200 && status < 300;
}

} // namespace

std::size_t
on_body(char* data, std::size_t size, std::size_t count, void* user)
{
  auto& t = *static_cast<Transfer*>(user);
  const std::string_view chunk(data, size * count);
  long status = 0;
  t.curl->easy_getinfo(t.handle, CURLINFO_RESPONSE_CODE, &status);
  if (!is_success(status)) {
    const auto room = k_max_error_body - std::min(k_max_error_body, t.response->body.size());
    t.response->body.append(chunk.substr(0, room));
    if (chunk.size() >= room) {
      // An endless error body must not hold the request: what a message
      // quotes is here, the transfer stops (perform() keeps the answer).
      t.error_body_full = true;
      return 0;
    }
    return chunk.size();
  }
  if (!t.started) {
    t.started = true;
    t.response->status = status;
    if (t.request->on_start) {
      if (auto ok = t.request->on_start(*t.response); !ok) {
        t.sink_error = std::move(ok).error();
        return 0;
      }
    }
  }
  t.received += chunk.size();
  if (t.request->sink) {
    if (auto ok = t.request->sink(chunk); !ok) {
      t.sink_error = std::move(ok).error();
      return 0;
    }
    return chunk.size();
  }
  if (t.response->body.size() + chunk.size() > t.request->max_body_bytes) {
    t.sink_error =
      Error(Errc::verify,
            fmt::format("the answer is larger than the {} bytes allowed for it", t.request->max_body_bytes), "E_LIMIT");
    return 0;
  }
  t.response->body.append(chunk);
  return chunk.size();
}

std::size_t
on_header(char* data, std::size_t size, std::size_t count, void* user)
{
  auto& t = *static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    t.response->headers.clear(); // a new answer (after a redirect or a 100)
    return line.size();
  }
  if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    t.response->headers[lowercase(trim(line.substr(0, colon)))] = std::string(trim(line.substr(colon + 1)));
  }
  return line.size();
}

std::size_t
on_upload(char* buffer, std::size_t size, std::size_t count, void* user)
{
  auto& t = *static_cast<Transfer*>(user);
  return std::fread(buffer, 1, size * count, t.upload);
}

bool
is_transient(CURLcode code)
{
  switch (code) {
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_PARTIAL_FILE:
  case CURLE_GOT_NOTHING:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_SSL_CONNECT_ERROR:
    return true;
  default:
    return false;
  }
}

} // namespace prewarm::registry
