// SPDX-License-Identifier: Apache-2.0
#include "registry/docker_credentials.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "registry/credential_helper.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>

namespace prewarm::registry {

namespace {

// "https://host/v1/" -> "host"
std::string
normalize_server(std::string_view server)
{
  for (const std::string_view scheme : {"https://", "http://"}) {
    if (server.starts_with(scheme)) {
      server.remove_prefix(scheme.size());
    }
  }
  if (const auto slash = server.find('/'); slash != std::string_view::npos) {
    server = server.substr(0, slash);
  }
  return std::string(server);
}

// docker.io's credentials are filed under its historic index address.
bool
same_server(std::string_view key, std::string_view host)
{
  const auto normalized = normalize_server(key);
  if (normalized == host) {
    return true;
  }
  const auto is_hub = [](std::string_view h) {
    return h == "docker.io" || h == "index.docker.io" || h == "registry-1.docker.io";
  };
  return is_hub(normalized) && is_hub(host);
}

const nlohmann::json*
entry_for(const nlohmann::json& config, const char* section, std::string_view host)
{
  const auto it = config.find(section);
  if (it == config.end() || !it->is_object()) {
    return nullptr;
  }
  for (const auto& [key, value] : it->items()) {
    if (same_server(key, host)) {
      return &value;
    }
  }
  return nullptr;
}

Result<std::optional<Credentials>>
from_helper(const std::string& helper, const std::string& host, std::chrono::milliseconds timeout)
{
  const auto program = "docker-credential-" + helper;
  PW_ASSIGN_CTX(const auto output, fmt::format("credential helper {} for {}", program, host),
                run_credential_helper(program, host, timeout));
  try {
    const auto answer = nlohmann::json::parse(output);
    Credentials credentials{answer.at("Username").get<std::string>(), answer.at("Secret").get<std::string>(),
                            program};
    if (credentials.username == "<token>") {
      return fail(Errc::usage,
                  fmt::format("credential helper {} answers an identity token for {}; prewarm needs a user name "
                              "and password or access token",
                              program, host),
                  "E_CREDENTIALS");
    }
    return credentials;
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::usage, fmt::format("credential helper {} for {}: unreadable answer: {}", program, host, e.what()),
                "E_CREDENTIALS");
  }
}

} // namespace

std::filesystem::path
docker_config_path()
{
  if (const char* dir = std::getenv("DOCKER_CONFIG"); dir != nullptr && *dir != '\0') {
    return std::filesystem::path(dir) / "config.json";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : "/") / ".docker" / "config.json";
}

Result<std::optional<Credentials>>
find_credentials(const std::filesystem::path& config_file, const std::string& registry_host,
                 std::chrono::milliseconds helper_timeout)
{
  std::error_code ec;
  if (!std::filesystem::exists(config_file, ec)) {
    return std::optional<Credentials>{};
  }
  PW_ASSIGN(const auto text, read_file(config_file.string(), std::uint64_t{4} << 20));
  const auto bad = [&](std::string_view why) {
    return fail(Errc::usage, fmt::format("{}: {}", config_file.string(), why), "E_CREDENTIALS");
  };
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return bad(fmt::format("not JSON: {}", e.what()));
  }
  if (!config.is_object()) {
    return bad("not a JSON object");
  }
  if (const auto* helper = entry_for(config, "credHelpers", registry_host); helper != nullptr) {
    if (!helper->is_string()) {
      return bad(fmt::format("credHelpers[{}] is not a string", registry_host));
    }
    return from_helper(helper->get<std::string>(), registry_host, helper_timeout);
  }
  if (const auto store = config.find("credsStore"); store != config.end() && store->is_string() &&
                                                      !store->get<std::string>().empty()) {
    return from_helper(store->get<std::string>(), registry_host, helper_timeout);
  }
  const auto* auth = entry_for(config, "auths", registry_host);
  if (auth == nullptr || !auth->is_object()) {
    return std::optional<Credentials>{};
  }
  const auto encoded = auth->find("auth");
  if (encoded == auth->end() || !encoded->is_string() || encoded->get<std::string>().empty()) {
    if (auth->contains("identitytoken")) {
      return bad(fmt::format("auths[{}] holds an identity token (OAuth2 refresh), which prewarm does not use; "
                             "log in with a password or access token",
                             registry_host));
    }
    return std::optional<Credentials>{};
  }
  const auto decoded = base64_decode(encoded->get<std::string>());
  const auto colon = decoded ? decoded->find(':') : std::string::npos;
  if (!decoded || colon == std::string::npos) {
    return bad(fmt::format("auths[{}].auth is not base64 of \"user:password\"", registry_host));
  }
  return Credentials{decoded->substr(0, colon), decoded->substr(colon + 1), config_file.string() + " auths"};
}

} // namespace prewarm::registry
