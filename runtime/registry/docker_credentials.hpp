// SPDX-License-Identifier: Apache-2.0
// Registry credentials the way Docker, Podman, skopeo and ORAS find them:
// the Docker config file ($DOCKER_CONFIG/config.json, else
// ~/.docker/config.json), where for a registry host
//   1. credHelpers[host] names a helper, else credsStore names one: the
//      program docker-credential-<name> is run as `... get` with the server
//      on stdin and answers {"ServerURL","Username","Secret"} on stdout;
//   2. else auths[host].auth is base64("user:password").
// auths keys may be written "host", "https://host" or "https://host/v1/".
// An identity token (Username "<token>", auths[].identitytoken) needs the
// OAuth2 refresh flow, which prewarm does not do: it is reported and skipped.
#pragma once

#include "base/error.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace prewarm::registry {

struct Credentials
{
  std::string username;
  std::string secret;
  std::string source; // "config.json auths", "docker-credential-pass": for messages
};

// The config file that applies: $DOCKER_CONFIG/config.json, else
// $HOME/.docker/config.json (it may not exist).
std::filesystem::path docker_config_path();

// No file, no entry: nullopt. A malformed file, or a helper that fails:
// Errc::usage naming the file (or helper) and the registry.
Result<std::optional<Credentials>> find_credentials(const std::filesystem::path& config_file,
                                                    const std::string& registry_host,
                                                    std::chrono::milliseconds helper_timeout = std::chrono::seconds(10));

} // namespace prewarm::registry
