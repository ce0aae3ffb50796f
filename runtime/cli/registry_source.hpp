// SPDX-License-Identifier: Apache-2.0
// `prewarm-runtime install` from an OCI registry: the options (shared by
// every command that reads a registry), read into one call of the pull
// policy (pull/registry_install.hpp: pull, install, retry and discard).
//
//   install REGISTRY/REPO@sha256:HEX | oci://REGISTRY/REPO@sha256:HEX
//   install --referrer-of REGISTRY/REPO@sha256:HEX   (the bundle attached to an image)
//   [--ca-file PEM] [--insecure-loopback-tls] [--plain-http] [--retries N]
//   [--registry-timeout 60s] [--registry-min-rate KIB]
//
// --registry-timeout bounds the whole pull (every request, retry and wait):
// a registry that trickles or never finishes an answer costs the container
// start at most that, and with --on-failure warn the application then starts
// on the caches installed before. Within it, a document request has a fixed
// time and a blob its size at --registry-min-rate KiB/s more.
// --plain-http is for a registry on this machine (127.0.0.0/8, [::1],
// localhost: `registry:2` on localhost:5000); any other host: E_PLAIN_HTTP.
//
// The pulled bundle directory lives under ROOT/.prewarm/downloads/<hex> until
// the install succeeds (or fails verification); a failed transfer leaves it
// for the next run to resume.
#pragma once

#include "base/error.hpp"
#include "bundle/trust.hpp"
#include "host/host_device.hpp"
#include "install/installer.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <span>
#include <string>

namespace prewarm::runtime_cli {

struct RegistryOptions
{
  std::string referrer_of;
  std::string ca_file;
  bool insecure_loopback_tls = false;
  bool plain_http = false;
  int attempts = 4;
  std::string timeout = "60s";
  std::uint64_t min_rate_kib = 256;
};

void add_registry_options(CLI::App& command, RegistryOptions& options);

// True when `source` names a registry (oci://..., ...@sha256:...) rather than
// a directory, or --referrer-of was given.
bool is_registry_source(const std::string& source, const RegistryOptions& options);

Result<install::InstallReport> install_from_registry(const std::string& source, const RegistryOptions& options,
                                                     const bundle::TrustStore& trust, const std::filesystem::path& root,
                                                     const install::HostSource& host,
                                                     const install::InstallOptions& install_options);

} // namespace prewarm::runtime_cli
