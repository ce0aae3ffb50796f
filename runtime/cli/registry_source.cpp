// SPDX-License-Identifier: Apache-2.0
#include "cli/registry_source.hpp"

#include "base/time_format.hpp"
#include "install/install_layout.hpp"
#include "pull/registry_install.hpp"
#include "registry/image_reference.hpp"

#include <chrono>

namespace prewarm::runtime_cli {

void
add_registry_options(CLI::App& command, RegistryOptions& options)
{
  command.add_option("--referrer-of", options.referrer_of,
                     "install the bundle attached (OCI subject) to this image, REGISTRY/REPO@sha256:HEX");
  command.add_option("--ca-file", options.ca_file, "PEM CA certificates trusted for the registry, besides the system's");
  command.add_flag("--insecure-loopback-tls", options.insecure_loopback_tls,
                   "do not verify the registry's TLS certificate; only for 127.0.0.0/8 and [::1] (test registries)");
  command.add_option("--retries", options.attempts, "tries per registry request, with exponential backoff")
    ->check(CLI::Range(1, 10))
    ->capture_default_str();
  command.add_flag("--plain-http", options.plain_http,
                   "http instead of https; only for a registry on this machine (127.0.0.0/8, [::1], localhost)");
  command.add_option("--registry-timeout", options.timeout,
                     "the whole pull (every request, retry and wait) ends within this; then the caches installed "
                     "before stay")
    ->capture_default_str();
  command.add_option("--registry-min-rate", options.min_rate_kib,
                     "KiB/s a slice download must keep: a blob may take a fixed time plus its size at this rate")
    ->check(CLI::Range(1, 1 << 30))
    ->capture_default_str();
}

bool
is_registry_source(const std::string& source, const RegistryOptions& options)
{
  if (!options.referrer_of.empty()) {
    return true;
  }
  std::error_code ec;
  return registry::looks_like_registry_reference(source) && !std::filesystem::exists(source, ec);
}

Result<install::InstallReport>
install_from_registry(const std::string& source, const RegistryOptions& options, const bundle::TrustStore& trust,
                      const std::filesystem::path& root, const install::HostSource& host,
                      const install::InstallOptions& install_options)
{
  if (!options.referrer_of.empty() && !source.empty()) {
    return fail(Errc::usage, "install: give a bundle reference or --referrer-of IMAGE, not both");
  }
  PW_ASSIGN_CTX(const auto timeout, "--registry-timeout", parse_duration(options.timeout));
  const auto started = std::chrono::steady_clock::now();
  pull::PullRequest request;
  request.trust = &trust;
  request.now = install_options.now.value_or(std::chrono::time_point_cast<std::chrono::seconds>(
    std::chrono::system_clock::now()));
  request.verify = install_options.verify;
  request.waived_requirements = install_options.waived_requirements;
  request.host = host;
  request.downloads = install::meta_dir(root) / "downloads";
  request.client.ca_file = options.ca_file;
  request.client.tls = options.insecure_loopback_tls ? registry::TlsVerification::insecure_loopback
                                                     : registry::TlsVerification::verify;
  request.client.plain_http = options.plain_http;
  request.client.attempts = options.attempts;
  request.client.min_rate_kib = options.min_rate_kib;
  request.client.deadline = started + timeout;

  pull::RegistrySource pinned;
  if (!options.referrer_of.empty()) {
    PW_ASSIGN_CTX(pinned.reference, "--referrer-of", registry::parse_pinned_reference(options.referrer_of));
    pinned.names = pull::RegistrySource::Names::image_it_refers_to;
  } else {
    PW_ASSIGN(pinned.reference, registry::parse_pinned_reference(source));
  }
  return pull::install_from_registry(pinned, std::move(request), root, install_options);
}

} // namespace prewarm::runtime_cli
