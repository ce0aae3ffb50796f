// SPDX-License-Identifier: Apache-2.0
// prewarm push BUNDLE DEST [--subject IMAGE@sha256:HEX] [--ca-file PEM] [--insecure-loopback-tls]
//                          [--plain-http] [--registry-timeout DURATION] [--registry-min-rate KIB]
//   DEST: [docker://]REGISTRY/REPO[:TAG]   an OCI 1.1 artifact in a registry
//         oci:DIR[:REF] | oci-archive:FILE[:REF]   an OCI image layout (air-gapped copies)
// Prints the pinned reference (REGISTRY/REPO@sha256:HEX; for a layout, the
// manifest digest) on stdout: what prewarm-runtime install takes.
#include "cli/commands.hpp"

#include "base/log.hpp"
#include "base/time_format.hpp"
#include "push/bundle_artifact.hpp"
#include "push/oci_layout_writer.hpp"
#include "push/registry_push.hpp"
#include "registry/image_reference.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

namespace prewarm::cli {

namespace {

struct PushOptions
{
  std::string bundle;
  std::string destination;
  std::string subject;
  std::string ca_file;
  bool insecure_loopback_tls = false;
  bool plain_http = false;
  int attempts = 4;
  std::string timeout = "10m";
  std::uint64_t min_rate_kib = 256;
};

Status
run_push(const PushOptions& options)
{
  registry::ClientOptions client;
  client.ca_file = options.ca_file;
  client.tls = options.insecure_loopback_tls ? registry::TlsVerification::insecure_loopback
                                             : registry::TlsVerification::verify;
  client.attempts = options.attempts;
  client.plain_http = options.plain_http;
  client.min_rate_kib = options.min_rate_kib;
  PW_ASSIGN_CTX(const auto timeout, "--registry-timeout", parse_duration(options.timeout));
  client.deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<registry::Descriptor> subject;
  std::optional<registry::ImageReference> subject_ref;
  if (!options.subject.empty()) {
    PW_ASSIGN_CTX(subject_ref, "--subject", registry::parse_pinned_reference(options.subject));
    PW_ASSIGN(subject, push::resolve_subject(*subject_ref, client));
  }
  PW_ASSIGN(const auto artifact, push::make_bundle_artifact(options.bundle, subject));

  if (const auto layout = push::parse_layout_destination(options.destination)) {
    PW_TRY(push::write_oci_layout(artifact, *layout));
    log::info("wrote {} ({} blobs)", options.destination, artifact.blobs.size() + 1);
    fmt::print("{}\n", artifact.manifest_descriptor.digest);
    return {};
  }
  std::string_view text = options.destination;
  if (text.starts_with("docker://")) {
    text.remove_prefix(9);
  }
  PW_ASSIGN(const auto target, registry::parse_image_reference(text));
  if (subject_ref && (subject_ref->registry != target.registry || subject_ref->repository != target.repository)) {
    return fail(Errc::usage, fmt::format("--subject {} must be in the repository the bundle is pushed to ({}/{}): "
                                         "referrers are listed per repository",
                                         subject_ref->to_string(), target.registry, target.repository));
  }
  PW_ASSIGN(const auto pushed, push::push_to_registry(artifact, target, client));
  log::info("pushed {}: {} blobs uploaded, {} already present{}", target.to_string(), pushed.blobs_uploaded,
            pushed.blobs_present, pushed.referrers_tag_updated ? "; referrers tag updated" : "");
  fmt::print("{}\n", target.with_digest(pushed.digest).to_string());
  return {};
}

} // namespace

void
add_push_command(CLI::App& app, Action& action)
{
  auto options = std::make_shared<PushOptions>();
  auto* cmd = app.add_subcommand("push", "push a bundle to an OCI registry, or write it as an OCI image layout");
  cmd->add_option("bundle", options->bundle, "bundle directory")->required();
  cmd->add_option("destination", options->destination,
                  "REGISTRY/REPO[:TAG], oci:DIR[:REF] or oci-archive:FILE[:REF]")
    ->required();
  cmd->add_option("--subject", options->subject,
                  "attach the bundle to this image (REGISTRY/REPO@sha256:HEX, same repository) as an OCI referrer");
  cmd->add_option("--ca-file", options->ca_file, "PEM CA certificates trusted for the registry, besides the system's");
  cmd->add_flag("--insecure-loopback-tls", options->insecure_loopback_tls,
                "do not verify the registry's TLS certificate; only for 127.0.0.0/8 and [::1]");
  cmd->add_flag("--plain-http", options->plain_http,
                "http instead of https; only for a registry on this machine (127.0.0.0/8, [::1], localhost)");
  cmd->add_option("--retries", options->attempts, "tries per registry request, with exponential backoff")
    ->check(CLI::Range(1, 10))
    ->capture_default_str();
  cmd->add_option("--registry-timeout", options->timeout,
                  "the whole push (every request, retry and wait) ends within this")
    ->capture_default_str();
  cmd->add_option("--registry-min-rate", options->min_rate_kib,
                  "KiB/s an upload must keep: a blob may take a fixed time plus its size at this rate")
    ->check(CLI::Range(1, 1 << 30))
    ->capture_default_str();
  cmd->callback([&action, options] { action = [options] { return run_push(*options); }; });
}

} // namespace prewarm::cli
