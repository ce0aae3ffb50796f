// SPDX-License-Identifier: Apache-2.0
// HTTP to one OCI registry through libcurl: TLS (system CAs plus an optional
// CA file; verification off only for a loopback address, on request; plain
// http only for a loopback registry), the distribution spec's auth challenge
// (a 401 with WWW-Authenticate: Basic, or Bearer realm/service/scope answered
// by a token from the realm, credentials from the Docker config), deadlines,
// and a retry loop with exponential backoff for failures that may pass
// (connection refused, timeouts, 429, 5xx).
//
// Time: a registry that trickles bytes or sends an endless error body must
// not hold a container's start. Every request has a deadline (a document:
// document_timeout; a blob: that plus its size at min_rate_kib), every
// operation may have one over all its requests, retries and waits
// (ClientOptions::deadline, --registry-timeout), and an error body is read
// only up to the excerpt kept for the message.
//
// Credentials are bound to the registry's origin (scheme, host, port): the
// Authorization header goes only to URLs of that origin, and a 401 from any
// other origin (a CDN a blob was redirected to, an upload Location on
// another host) is an error, never answered with the registry's
// credentials. Tokens are accepted only in RFC 6750 characters, so a token
// cannot add header lines.
//
// Redirects (registries send blob downloads to a CDN) are followed here, not
// by libcurl, for GET and HEAD only, at most three, to https only (to http
// only for a loopback host with --plain-http), and with
// --insecure-loopback-tls only to loopback hosts (unverified TLS must not
// reach beyond loopback); the bytes that arrive are digest checked by the
// caller wherever they come from.
#pragma once

#include "base/error.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::registry {

// Error codes the registry layer uses (Error::code()).
inline constexpr std::string_view k_unavailable = "E_REGISTRY_UNAVAILABLE"; // may pass: retried
inline constexpr std::string_view k_registry_error = "E_REGISTRY";          // an answer that will not change
inline constexpr std::string_view k_not_found = "E_NOT_FOUND";
inline constexpr std::string_view k_auth_error = "E_AUTH";
inline constexpr std::string_view k_deadline = "E_REGISTRY_DEADLINE"; // the operation's deadline passed: not retried
inline constexpr std::string_view k_plain_http = "E_PLAIN_HTTP";      // --plain-http for a host that is not loopback

enum class TlsVerification {
  verify,             // system CAs (+ ca_file)
  insecure_loopback,  // no verification; only for 127.0.0.0/8 and ::1 literals
};

struct ClientOptions
{
  std::filesystem::path ca_file; // trusted in addition to the system CAs
  TlsVerification tls = TlsVerification::verify;
  std::filesystem::path docker_config; // empty: docker_config_path()
  // http:// instead of https://; refused (k_plain_http) unless the registry
  // is a loopback address or localhost.
  bool plain_http = false;
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds stall_timeout{30}; // less than 1 byte/s for this long: give up
  // One request for a document (manifest, index, token, small blob), and the
  // fixed part of a blob's time.
  std::chrono::seconds document_timeout{20};
  // A blob of N bytes may take document_timeout + N / (min_rate_kib KiB/s).
  std::uint64_t min_rate_kib = 256;
  // Over every request, retry and backoff of this client: past it, requests
  // fail with k_deadline (a request in flight is cut at it).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  int attempts = 4;                       // tries per request, the first included
  std::chrono::milliseconds backoff_base{500};
  std::chrono::milliseconds backoff_cap{8000};
};

struct HttpResponse;

struct HttpRequest
{
  std::string method = "GET";
  std::string path; // "/v2/<name>/manifests/<ref>", or an absolute URL (an upload location)
  std::vector<std::string> headers;
  std::string body;                  // for PUT/POST of small documents
  std::filesystem::path upload_file; // PUT of a large file (a blob), instead of body
  // Receives the body of a 2xx answer as it arrives; an error aborts the
  // transfer and is returned. Without a sink the body is kept in
  // HttpResponse::body, up to max_body_bytes (more: Errc::verify E_LIMIT).
  std::function<Status(std::string_view)> sink;
  // Called once before the first byte of a 2xx body reaches the sink, with
  // the status and headers (a resumed download checks 206 vs 200 here).
  std::function<Status(const HttpResponse&)> on_start;
  std::uint64_t max_body_bytes = std::uint64_t{4} << 20;
  // The size of the body this request moves (a blob down or up): its time
  // allowance grows with it (ClientOptions::min_rate_kib). 0: a document.
  std::uint64_t transfer_bytes = 0;
};

struct HttpResponse
{
  long status = 0;
  std::map<std::string, std::string> headers; // lowercase names, of the final answer
  std::string body;                           // without a sink; error bodies (capped) always
  std::string redirect_url;                   // of a 3xx answer, resolved against the request's URL
  std::string header(std::string_view name) const;
};

class RegistryClient
{
public:
  // `registry` is host[:port]. Errc::usage for --insecure-loopback-tls on a
  // host that is not a loopback address literal, and for plain_http on a
  // host that is neither that nor localhost (k_plain_http).
  static Result<RegistryClient> create(std::string registry, ClientOptions options);
  RegistryClient(RegistryClient&&) noexcept;
  RegistryClient& operator=(RegistryClient&&) noexcept;
  ~RegistryClient();

  // One request, answering an auth challenge of the registry's origin once
  // and following redirects (see above). Transport failures come back as
  // errors (k_unavailable where a retry may help, k_deadline past the
  // deadline); any HTTP status comes back as a response.
  Result<HttpResponse> send(const HttpRequest& request);

  // Runs `attempt` up to options.attempts times while it fails with
  // k_unavailable, sleeping base * 2^i (capped) between tries; never past
  // the deadline.
  template<typename T> Result<T> with_retries(std::string_view what, const std::function<Result<T>()>& attempt);

  const std::string& registry() const;
  std::string url(std::string_view path) const;

  // Bytes received in 2xx bodies through this client (for reports and benches).
  std::uint64_t bytes_received() const;

private:
  struct State;
  explicit RegistryClient(std::unique_ptr<State> state);
  int attempts() const;
  // Sleeps before try attempt + 1; false when the deadline comes first.
  bool backoff(std::string_view what, int attempt, const Error& error) const;
  std::unique_ptr<State> m_state;
};

// Whether `host` (host[:port], [v6][:port]) is a loopback address literal
// (127.0.0.0/8, ::1) or localhost.
bool is_loopback_host(std::string_view host);

// Whether `token` is an RFC 6750 b64token: [A-Za-z0-9-._~+/]+ =*.
bool is_valid_token(std::string_view token);

// The status of `response` as an error unless it is one of `expected`:
// 404 k_not_found, 401/403 k_auth_error, 429/5xx k_unavailable, else
// k_registry_error; the message names `what` and quotes the registry's answer.
Status expect_status(const HttpResponse& response, std::initializer_list<long> expected, std::string_view what);

template<typename T>
Result<T>
RegistryClient::with_retries(std::string_view what, const std::function<Result<T>()>& attempt)
{
  for (int i = 1;; ++i) {
    auto result = attempt();
    if (result || result.error().code() != k_unavailable || i >= attempts() || !backoff(what, i, result.error())) {
      return result;
    }
  }
}

} // namespace prewarm::registry
