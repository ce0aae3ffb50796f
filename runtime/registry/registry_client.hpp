// SPDX-License-Identifier: Apache-2.0
// HTTP to one OCI registry through libcurl: TLS (system CAs plus an optional
// CA file; verification off only for a loopback address, on request),
// the distribution spec's auth challenge (a 401 with WWW-Authenticate:
// Basic, or Bearer realm/service/scope answered by a token from the realm,
// credentials from the Docker config), bounded timeouts, and a retry loop
// with exponential backoff for failures that may pass (connection refused,
// timeouts, 429, 5xx).
//
// Redirects (registries send blob downloads to a CDN) are followed, at most
// three, to https only, and never with --insecure-loopback-tls (that would
// extend unverified TLS beyond loopback); the bytes that arrive are digest
// checked by the caller wherever they come from.
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

enum class TlsVerification {
  verify,             // system CAs (+ ca_file)
  insecure_loopback,  // no verification; only for 127.0.0.0/8 and ::1 literals
};

struct ClientOptions
{
  std::filesystem::path ca_file; // trusted in addition to the system CAs
  TlsVerification tls = TlsVerification::verify;
  std::filesystem::path docker_config; // empty: docker_config_path()
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds stall_timeout{30}; // less than 1 byte/s for this long: give up
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
};

struct HttpResponse
{
  long status = 0;
  std::map<std::string, std::string> headers; // lowercase names, of the final answer
  std::string body;                           // without a sink; error bodies (capped) always
  std::string header(std::string_view name) const;
};

class RegistryClient
{
public:
  // `registry` is host[:port]. Errc::usage for --insecure-loopback-tls on a
  // host that is not a loopback address literal.
  static Result<RegistryClient> create(std::string registry, ClientOptions options);
  RegistryClient(RegistryClient&&) noexcept;
  RegistryClient& operator=(RegistryClient&&) noexcept;
  ~RegistryClient();

  // One request, answering an auth challenge once. Transport failures come
  // back as errors (k_unavailable where a retry may help); any HTTP status
  // comes back as a response.
  Result<HttpResponse> send(const HttpRequest& request);

  // Runs `attempt` up to options.attempts times while it fails with
  // k_unavailable, sleeping base * 2^i (capped) between tries.
  template<typename T> Result<T> with_retries(std::string_view what, const std::function<Result<T>()>& attempt);

  const std::string& registry() const;
  std::string url(std::string_view path) const;

  // Bytes received in 2xx bodies through this client (for reports and benches).
  std::uint64_t bytes_received() const;

private:
  struct State;
  explicit RegistryClient(std::unique_ptr<State> state);
  int attempts() const;
  void backoff(std::string_view what, int attempt, const Error& error) const;
  std::unique_ptr<State> m_state;
};

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
    if (result || result.error().code() != k_unavailable || i >= attempts()) {
      return result;
    }
    backoff(what, i, result.error());
  }
}

} // namespace prewarm::registry
