// SPDX-License-Identifier: Apache-2.0
#include "registry/registry_client.hpp"

#include "base/encoding.hpp"
#include "base/log.hpp"
#include "registry/auth_challenge.hpp"
#include "registry/curl_library.hpp"
#include "registry/docker_credentials.hpp"
#include "registry/http_transfer.hpp"
#include "registry/registry_origin.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <thread>

namespace prewarm::registry {

namespace {

struct CurlHandle
{
  explicit CurlHandle(const CurlLibrary& library) : curl(library), handle(library.easy_init()) {}
  CurlHandle(const CurlHandle&) = delete;
  CurlHandle& operator=(const CurlHandle&) = delete;
  ~CurlHandle()
  {
    curl.slist_free_all(headers);
    curl.easy_cleanup(handle);
  }
  const CurlLibrary& curl;
  CURL* handle = nullptr;
  curl_slist* headers = nullptr;
};

// Printable, one line, bounded: registry error bodies end up in messages.
std::string
excerpt(std::string_view body)
{
  std::string out;
  for (const char c : body.substr(0, 300)) {
    out += (c >= 0x20 && c < 0x7f) ? c : ' ';
  }
  return std::string(trim(out));
}

} // namespace

std::string
HttpResponse::header(std::string_view name) const
{
  const auto it = headers.find(lowercase(name));
  return it == headers.end() ? std::string() : it->second;
}

struct RegistryClient::State
{
  const CurlLibrary* curl = nullptr; // loaded by create()
  std::string registry;
  ClientOptions options;
  Origin origin;             // of the registry: where credentials may go
  std::string authorization; // "Basic ..." / "Bearer ...": the last one the registry took
  std::optional<std::optional<Credentials>> credentials; // looked up once, on the first challenge
  std::uint64_t bytes_received = 0;

  using Clock = std::chrono::steady_clock;

  Result<std::optional<Credentials>> lookup_credentials()
  {
    if (!credentials) {
      const auto config = options.docker_config.empty() ? docker_config_path() : options.docker_config;
      // A credential helper is a program: it waits for the deadline too.
      std::chrono::milliseconds helper_timeout{10'000};
      if (options.deadline) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*options.deadline - Clock::now());
        if (left.count() <= 0) {
          return fail(deadline_error(fmt::format("credentials for {}", registry)));
        }
        helper_timeout = std::min(helper_timeout, left);
      }
      PW_ASSIGN(auto found, find_credentials(config, registry, helper_timeout));
      if (found) {
        log::verbose("registry {}: credentials from {}", registry, found->source);
      }
      credentials = std::move(found);
    }
    return *credentials;
  }

  Error deadline_error(std::string_view what) const
  {
    return Error(Errc::failed,
                 fmt::format("{}: the registry deadline passed (--registry-timeout; the previous caches stay)", what),
                 std::string(k_deadline));
  }

  // The time one request may take: its allowance, cut at the deadline.
  // Zero or less: the deadline has passed.
  std::chrono::milliseconds request_budget(std::uint64_t transfer_bytes, bool& cut_by_deadline) const
  {
    const auto rate = std::max<std::uint64_t>(1, options.min_rate_kib) * 1024;
    auto budget = std::chrono::duration_cast<std::chrono::milliseconds>(options.document_timeout) +
                  std::chrono::milliseconds(transfer_bytes / rate * 1000 + (transfer_bytes % rate) * 1000 / rate);
    cut_by_deadline = false;
    if (options.deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*options.deadline - Clock::now());
      if (left <= budget) {
        budget = left;
        cut_by_deadline = true;
      }
    }
    return budget;
  }

  bool redirect_allowed(const Origin& to) const
  {
    const bool loopback = is_loopback_host(to.host); // CURLU writes a v6 host in brackets
    if (options.tls == TlsVerification::insecure_loopback && !loopback) {
      return false; // unverified TLS stays on loopback
    }
    return to.scheme == "https" || (to.scheme == "http" && options.plain_http && loopback);
  }

  Result<HttpResponse> perform(const HttpRequest& request, const std::string& url,
                               const std::string& authorization_header)
  {
    bool cut_by_deadline = false;
    const auto upload_size = [&]() -> std::uint64_t {
      std::error_code ec;
      return request.upload_file.empty() ? request.body.size() : std::filesystem::file_size(request.upload_file, ec);
    }();
    const auto budget = request_budget(std::max(request.transfer_bytes, upload_size), cut_by_deadline);
    if (budget.count() <= 0) {
      return fail(deadline_error(fmt::format("{} {}", request.method, url)));
    }
    const CurlLibrary& api = *curl;
    CurlHandle transfer_handle(api);
    if (transfer_handle.handle == nullptr) {
      return fail(Errc::failed, "curl_easy_init failed", std::string(k_registry_error));
    }
    HttpResponse response;
    Transfer transfer{&api, &request, &response, transfer_handle.handle, std::nullopt, 0, nullptr, false, false};
    auto* h = transfer_handle.handle;
    api.easy_setopt(h, CURLOPT_URL, url.c_str());
    api.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(h, CURLOPT_USERAGENT, "prewarm");
    api.easy_setopt(h, CURLOPT_PROTOCOLS_STR, options.plain_http ? "http,https" : "https");
    api.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::min<std::chrono::milliseconds>(options.connect_timeout, budget).count()));
    api.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(budget.count()));
    api.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    api.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.stall_timeout.count()));
    api.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    api.easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
    api.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    api.easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
    // Redirects are followed by send(), which decides where credentials go.
    api.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    if (options.tls == TlsVerification::insecure_loopback) {
      api.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      api.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!options.ca_file.empty()) {
      // CAINFO replaces the default bundle; the hashed system directory
      // keeps the system CAs trusted as well.
      api.easy_setopt(h, CURLOPT_CAINFO, options.ca_file.c_str());
      api.easy_setopt(h, CURLOPT_CAPATH, "/etc/ssl/certs");
    }
    for (const auto& header : request.headers) {
      transfer_handle.headers = api.slist_append(transfer_handle.headers, header.c_str());
    }
    if (!authorization_header.empty()) {
      transfer_handle.headers = api.slist_append(transfer_handle.headers, ("Authorization: " + authorization_header).c_str());
    }
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> upload(nullptr, std::fclose);
    if (request.method == "HEAD") {
      api.easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (!request.upload_file.empty()) {
      upload.reset(std::fopen(request.upload_file.c_str(), "rbe"));
      if (!upload) {
        return fail(Errc::failed, fmt::format("cannot open {} to upload it", request.upload_file.string()), "E_IO");
      }
      transfer.upload = upload.get();
      api.easy_setopt(h, CURLOPT_UPLOAD, 1L);
      api.easy_setopt(h, CURLOPT_READFUNCTION, on_upload);
      api.easy_setopt(h, CURLOPT_READDATA, &transfer);
      api.easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(upload_size));
      api.easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    } else if (request.method == "PUT" || request.method == "POST" || request.method == "PATCH") {
      api.easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      api.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      api.easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    } else if (request.method != "GET") {
      api.easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    api.easy_setopt(h, CURLOPT_HTTPHEADER, transfer_handle.headers);
    const CURLcode code = api.easy_perform(h);
    api.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
    if (char* location = nullptr; api.easy_getinfo(h, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location) {
      response.redirect_url = location;
    }
    bytes_received += transfer.received;
    if (transfer.sink_error) {
      return fail(std::move(*transfer.sink_error));
    }
    if (code == CURLE_WRITE_ERROR && transfer.error_body_full) {
      return response; // the excerpt of an error body: enough for the message
    }
    if (code == CURLE_OPERATION_TIMEDOUT) {
      if (cut_by_deadline) {
        return fail(deadline_error(fmt::format("{} {}", request.method, url)));
      }
      return fail(Errc::failed,
                  fmt::format("{} {}: no complete answer within {:.1f} s ({}: {} KiB/s at least)", request.method, url,
                              static_cast<double>(budget.count()) / 1000.0,
                              request.transfer_bytes > 0 || upload_size > 0 ? "a blob" : "a document",
                              options.min_rate_kib),
                  std::string(k_unavailable));
    }
    if (code == CURLE_UNSUPPORTED_PROTOCOL) {
      return fail(Errc::failed, fmt::format("{} {}: {}", request.method, url, api.easy_strerror(code)),
                  "E_REDIRECT");
    }
    if (code != CURLE_OK) {
      return fail(Errc::failed, fmt::format("{} {}: {}", request.method, url, api.easy_strerror(code)),
                  std::string(is_transient(code) ? k_unavailable : k_registry_error));
    }
    return response;
  }

  // A token for a Bearer challenge (distribution spec "token authentication").
  Result<std::string> fetch_token(const AuthChallenge& challenge)
  {
    PW_ASSIGN(const auto realm, parse_origin(challenge.realm));
    if (realm.scheme != "https" && !(realm.scheme == "http" && options.plain_http && origin.scheme == "http" &&
                                     realm.host == origin.host)) {
      return fail(Errc::failed, fmt::format("token realm {}: not https", challenge.realm), std::string(k_auth_error));
    }
    PW_ASSIGN(const auto creds, lookup_credentials());
    std::string query;
    const auto add = [&](std::string_view key, const std::string& value) {
      if (value.empty()) {
        return;
      }
      char* escaped = curl->easy_escape(nullptr, value.c_str(), static_cast<int>(value.size()));
      query += fmt::format("{}{}={}", query.empty() ? "?" : "&", key, escaped ? escaped : "");
      curl->free(escaped);
    };
    add("service", challenge.service);
    for (const auto& scope : challenge.scopes) {
      add("scope", scope);
    }
    HttpRequest token_request;
    token_request.path = challenge.realm + query;
    token_request.max_body_bytes = 1 << 20;
    PW_ASSIGN(const auto response,
              perform(token_request, token_request.path,
                      creds ? "Basic " + base64_encode(creds->username + ":" + creds->secret) : std::string()));
    PW_TRY(expect_status(response, {200}, fmt::format("token from {}", challenge.realm)));
    try {
      const auto answer = nlohmann::json::parse(response.body);
      for (const char* key : {"token", "access_token"}) {
        if (const auto it = answer.find(key); it != answer.end() && it->is_string() && !it->get<std::string>().empty()) {
          auto token = it->get<std::string>();
          if (!is_valid_token(token)) {
            // CR/LF or anything else outside RFC 6750 would become header
            // lines of every later request.
            return fail(Errc::failed,
                        fmt::format("token from {}: not an RFC 6750 token (characters outside A-Z a-z 0-9 -._~+/=)",
                                    challenge.realm),
                        "E_AUTH_TOKEN");
          }
          return token;
        }
      }
    } catch (const nlohmann::json::exception&) {
    }
    return fail(Errc::failed, fmt::format("token from {}: no token in the answer", challenge.realm),
                std::string(k_auth_error));
  }

  Result<std::string> answer_challenge(const HttpResponse& response)
  {
    PW_ASSIGN(const auto challenge, parse_auth_challenge(response.header("www-authenticate")));
    if (challenge.scheme == AuthScheme::bearer) {
      PW_ASSIGN(const auto token, fetch_token(challenge));
      return "Bearer " + token;
    }
    PW_ASSIGN(const auto creds, lookup_credentials());
    if (!creds) {
      return fail(Errc::failed,
                  fmt::format("registry {} asks for credentials and none are configured for it (docker login {}, or "
                              "auths in $DOCKER_CONFIG/config.json)",
                              registry, registry),
                  std::string(k_auth_error));
    }
    return "Basic " + base64_encode(creds->username + ":" + creds->secret);
  }
};

RegistryClient::RegistryClient(std::unique_ptr<State> state) : m_state(std::move(state)) {}
RegistryClient::RegistryClient(RegistryClient&&) noexcept = default;
RegistryClient& RegistryClient::operator=(RegistryClient&&) noexcept = default;
RegistryClient::~RegistryClient() = default;

Result<RegistryClient>
RegistryClient::create(std::string registry, ClientOptions options)
{
  if (options.tls == TlsVerification::insecure_loopback && !is_loopback_literal(registry)) {
    return fail(Errc::usage,
                fmt::format("--insecure-loopback-tls: {} is not a loopback address (127.0.0.0/8 or [::1]); use "
                            "--ca-file for a registry with its own CA",
                            registry),
                "E_USAGE");
  }
  if (options.plain_http && !is_loopback_host(registry)) {
    return fail(Errc::usage,
                fmt::format("--plain-http: {} is not a loopback registry (127.0.0.0/8, [::1] or localhost); "
                            "credentials and bundles travel in clear text only on this machine",
                            registry),
                std::string(k_plain_http));
  }
  options.attempts = std::max(1, options.attempts);
  auto state = std::make_unique<State>();
  PW_ASSIGN(state->curl, curl_library());
  state->registry = std::move(registry);
  state->options = std::move(options);
  auto client = RegistryClient(std::move(state));
  PW_ASSIGN(client.m_state->origin, parse_origin(client.url("/v2/")));
  return client;
}

const std::string&
RegistryClient::registry() const
{
  return m_state->registry;
}

std::string
RegistryClient::url(std::string_view path) const
{
  if (path.starts_with("https://") || path.starts_with("http://")) {
    return std::string(path);
  }
  return fmt::format("{}://{}{}", m_state->options.plain_http ? "http" : "https", m_state->registry, path);
}

std::uint64_t
RegistryClient::bytes_received() const
{
  return m_state->bytes_received;
}

int
RegistryClient::attempts() const
{
  return m_state->options.attempts;
}

bool
RegistryClient::backoff(std::string_view what, int attempt, const Error& error) const
{
  const auto& o = m_state->options;
  auto delay = o.backoff_base * (1LL << std::min(attempt - 1, 16));
  delay = std::min<std::chrono::milliseconds>(delay, o.backoff_cap);
  if (o.deadline && State::Clock::now() + delay >= *o.deadline) {
    return false; // no time for another try: the last error stands
  }
  // Most errors name the request already.
  const auto& message = error.message();
  log::info("{}{}; try {} of {} in {:.1f} s", message.starts_with(what) ? "" : fmt::format("{}: ", what), message,
            attempt + 1, o.attempts,
            static_cast<double>(delay.count()) / 1000.0);
  std::this_thread::sleep_for(delay);
  return true;
}

Result<HttpResponse>
RegistryClient::send(const HttpRequest& request)
{
  constexpr int k_max_redirects = 3;
  auto& state = *m_state;
  bool challenged = false;
  auto target = url(request.path);
  for (int redirects = 0;;) {
    PW_ASSIGN(const auto origin, parse_origin(target));
    const bool home = origin == state.origin;
    PW_ASSIGN(auto response, state.perform(request, target, home ? state.authorization : std::string()));
    if (response.status >= 300 && response.status < 400 && response.status != 304) {
      const auto refused = [&](std::string_view why) {
        return fail(Errc::failed,
                    fmt::format("{} {}: redirect to {} refused ({})", request.method, target,
                                in_quotes(response.redirect_url.substr(0, 200)), why),
                    "E_REDIRECT");
      };
      if (request.method != "GET" && request.method != "HEAD") {
        return refused("only GET and HEAD are redirected");
      }
      if (response.redirect_url.empty()) {
        return refused("no Location");
      }
      if (++redirects > k_max_redirects) {
        return refused(fmt::format("more than {} redirects", k_max_redirects));
      }
      PW_ASSIGN(const auto next, parse_origin(response.redirect_url));
      if (!state.redirect_allowed(next)) {
        return refused(state.options.tls == TlsVerification::insecure_loopback
                         ? "with --insecure-loopback-tls only to loopback hosts"
                         : "not an https redirect");
      }
      target = response.redirect_url;
      continue;
    }
    if (response.status != 401) {
      return response;
    }
    if (!home) {
      // A CDN or upload host asking for credentials: the registry's are
      // not its to have, whatever realm it names.
      return fail(Errc::failed,
                  fmt::format("{} {}: {} asks for credentials; the registry's ({}) are not sent to another host",
                              request.method, target, origin.to_string(), state.origin.to_string()),
                  std::string(k_auth_error));
    }
    if (challenged) {
      return response;
    }
    challenged = true;
    PW_ASSIGN_CTX(state.authorization, fmt::format("{} {}", request.method, target), state.answer_challenge(response));
    target = url(request.path);
    redirects = 0;
  }
}

bool
is_loopback_host(std::string_view host)
{
  return is_loopback_literal(host) || lowercase(host_part(host)) == "localhost";
}

bool
is_valid_token(std::string_view token)
{
  std::size_t i = 0;
  const auto token_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_' || c == '~' ||
           c == '+' || c == '/';
  };
  while (i < token.size() && token_char(token[i])) {
    ++i;
  }
  if (i == 0) {
    return false;
  }
  while (i < token.size() && token[i] == '=') {
    ++i;
  }
  return i == token.size();
}

Status
expect_status(const HttpResponse& response, std::initializer_list<long> expected, std::string_view what)
{
  if (std::ranges::find(expected, response.status) != expected.end()) {
    return {};
  }
  const auto message = fmt::format("{}: HTTP {}{}", what, response.status,
                                   response.body.empty() ? std::string() : ": " + excerpt(response.body));
  const long s = response.status;
  if (s == 404) {
    return fail(Errc::failed, message, std::string(k_not_found));
  }
  if (s == 401 || s == 403) {
    return fail(Errc::failed, message + " (check the credentials for this registry)", std::string(k_auth_error));
  }
  if (s == 429 || s >= 500) {
    return fail(Errc::failed, message, std::string(k_unavailable));
  }
  return fail(Errc::failed, message, std::string(k_registry_error));
}

} // namespace prewarm::registry
