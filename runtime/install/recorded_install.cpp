// SPDX-License-Identifier: Apache-2.0
#include "install/recorded_install.hpp"

#include "base/digest.hpp"
#include "base/log.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/signature.hpp"
#include "install/application_environment.hpp"
#include "install/install_layout.hpp"
#include "install/install_records.hpp"
#include "install/installed_state.hpp"
#include "install/start_record.hpp"
#include "install/version_switch.hpp"

#include <chrono>

namespace prewarm::install {

namespace fs = std::filesystem;

std::optional<InstallReport>
recorded_install(const fs::path& bundle_dir, const bundle::TrustStore& trust, const fs::path& root,
                 const HostSource& host, const InstallOptions& options)
{
  const auto started = std::chrono::steady_clock::now();
  const SysSeconds now = options.now.value_or(now_seconds());
  // -v says why a repeated install takes the full path: a start that should
  // cost a few milliseconds and does not is otherwise a mystery.
  const auto full_path = [](std::string_view why) -> std::optional<InstallReport> {
    log::verbose("start record not used ({}): verifying the whole manifest", why);
    return std::nullopt;
  };
  auto marker = read_marker(root);
  if (!marker || !*marker || (*marker)->version.empty()) {
    return std::nullopt; // nothing installed: no record to use, nothing to say
  }
  const auto& installed = **marker;
  const auto version_dir = versions_dir(root) / installed.version;
  const auto record = read_start_record(version_dir);
  if (!record) {
    return full_path(record.error().message());
  }
  if (!*record) {
    return full_path("the installed version has none");
  }
  if ((*record)->runtime != start_record_runtime() || (*record)->manifest_sha256 != installed.manifest_sha256) {
    return full_path("written by another runtime or for another manifest");
  }
  if ((*record)->policy != policy_digest(options.verify.policy)) {
    return full_path("the trust policy differs from the install's");
  }
  const StartRecord& start = **record;
  auto files = bundle::load_bundle_files(bundle_dir);
  if (!files) {
    return full_path(files.error().message());
  }
  const auto manifest_sha256 = sha256_hex(files->manifest_bytes);
  if (manifest_sha256 != start.manifest_sha256) {
    return full_path("another bundle");
  }
  auto signers = bundle::verified_signers(files->manifest_bytes, files->envelope_bytes, trust, now);
  if (!signers) {
    return full_path(signers.error().message());
  }
  bundle::BundleManifest period;
  period.issued_at = start.issued_at;
  period.expires = start.expires;
  std::vector<std::string> warnings;
  if (!check_validity_period(period, now, options.verify, warnings) || !warnings.empty()) {
    return full_path("the validity period needs a word");
  }
  host::FrameworkSearch search{start.frameworks_wanted, {start.site_packages.begin(), start.site_packages.end()}};
  const std::string fingerprint = host.fingerprint ? host.fingerprint(search) : "";
  if (!unchanged_host_install(root, manifest_sha256, fingerprint)) {
    return full_path("the host fingerprint differs from the install's");
  }
  if (!environment_recorded(version_dir, options.verify.policy.allowed_environment)) {
    return full_path("the environment is not recorded under this policy");
  }
  if (!kind_links_point_at(root, installed.version, kind_names(installed))) {
    return full_path("a kind link does not point at the installed version");
  }
  InstallReport report;
  report.root = root;
  report.manifest_sha256 = manifest_sha256;
  report.channel = installed.channel;
  report.serial = installed.serial;
  report.signer_key_ids = std::move(*signers);
  report_in_place(root, installed, start.refused, report);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  report.phases.push_back({"verify", seconds});
  report.seconds = seconds;
  return report;
}

} // namespace prewarm::install
