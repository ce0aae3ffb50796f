// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime install BUNDLE --trust PUB|POLICY [--root DIR] [--on-failure fail|warn] [--json]
//                         [--owner UID:GID] [--replace-channel]
//   BUNDLE: a directory, or a registry reference pinned by digest
//   (REGISTRY/REPO@sha256:HEX, oci://...; or --referrer-of IMAGE@sha256:HEX):
//   cli/registry_source.hpp
//
// --owner gives every installed file to the application's user when the
// installer is root (install/user_access.hpp: why, and what happens without
// it); it overrides the trust policy's install.owner. --replace-channel lets a
// bundle of another channel replace the installed one (install/channel_guard.hpp).
//
// --on-failure warn is what a container entrypoint passes: whatever goes
// wrong (a bad signature, a full disk, no matching slice), the reason is
// printed and the exit status is 0, so the application starts and compiles
// its kernels itself. fail (the default here) exits 1, 3 or 4.
#include "base/json_schema.hpp"
#include "base/log.hpp"
#include "cli/registry_source.hpp"
#include "cli/runtime_commands.hpp"
#include "cli/trust_options.hpp"
#include "install/application_environment.hpp"
#include "install/installer.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace prewarm::runtime_cli {

namespace {

struct InstallCommand
{
  std::string bundle_dir;
  std::string root;
  TrustOptions trust;
  RegistryOptions registry;
  std::string on_failure = "fail";
  std::string lock_timeout = "120s";
  std::string owner;
  bool replace_channel = false;
  std::vector<std::string> ignored_requirements;
  std::string space_margin;
  bool json = false;

  Result<install::InstallReport> install() const
  {
    PW_ASSIGN(const auto policy, load_policy(trust));
    install::InstallOptions options;
    PW_ASSIGN(options.verify, verify_options(trust, policy));
    options.limits = policy.manifest.limits;
    if (!owner.empty()) {
      PW_ASSIGN_CTX(options.verify.policy.install_owner, "--owner", bundle::parse_install_owner(owner));
    }
    options.channels = replace_channel ? install::ChannelReplacement::replace : install::ChannelReplacement::refuse;
    options.waived_requirements = ignored_requirements;
    if (!space_margin.empty()) {
      PW_ASSIGN(options.space_margin, install::parse_space_margin(space_margin));
    }
    std::filesystem::path install_root = root;
    if (install_root.empty()) {
      if (!policy.install_root) {
        return fail(Errc::usage, "install: no --root given and the trust policy names no install.root");
      }
      install_root = *policy.install_root;
    }
    PW_ASSIGN_CTX(const auto timeout, "--lock-timeout", parse_duration(lock_timeout));
    options.lock_timeout = timeout;
    if (is_registry_source(bundle_dir, registry)) {
      return install_from_registry(bundle_dir, registry, policy.trust, install_root, install::probed_host(), options);
    }
    if (bundle_dir.empty()) {
      return fail(Errc::usage, "install: no bundle given (a directory, REGISTRY/REPO@sha256:..., or --referrer-of)");
    }
    // The host is probed only when the install needs it (install/installer.hpp).
    return install::install_bundle(bundle_dir, policy.trust, install_root, install::probed_host(), options);
  }

  void print(const install::InstallReport& r) const
  {
    for (const auto& w : r.warnings) {
      log::warn("{}", w);
    }
    for (const auto& s : r.skipped) {
      log::info("slice {} skipped: {}", s.slice_id, s.reason);
    }
    for (const auto& p : r.phases) {
      log::verbose("{}: {:.3f} s", p.name, p.seconds);
    }
    if (json) {
      auto phases = nlohmann::json::object();
      for (const auto& p : r.phases) {
        phases[p.name] = p.seconds;
      }
      auto selected = nlohmann::json::array();
      for (const auto& s : r.selected) {
        selected.push_back({{"slice", s.slice_id}, {"device", s.device}});
      }
      auto skipped = nlohmann::json::array();
      for (const auto& s : r.skipped) {
        skipped.push_back({{"slice", s.slice_id}, {"reason", s.reason}});
      }
      auto commits = nlohmann::json::array();
      for (const auto& c : r.commits) {
        commits.push_back({{"kind", c.kind},
                           {"method", install::to_string(c.method)},
                           {"files_moved", c.files_moved},
                           {"files_kept", c.files_kept}});
      }
      nlohmann::json out = {
        {k_json_schema_version_key, k_json_schema_version},
        {"installed", true},
        {"outcome", r.outcome == install::InstallOutcome::installed ? "installed" : "already-installed"},
        {"root", r.root.string()},
        {"manifest_sha256", r.manifest_sha256},
        {"channel", r.channel},
        {"serial", r.serial},
        {"selected", selected},
        {"skipped", skipped},
        {"commits", commits},
        {"version", r.version},
        {"warnings", r.warnings},
        {"seconds", r.seconds},
        {"phases", phases}};
      std::cout << out.dump(2) << "\n";
      return;
    }
    if (r.outcome == install::InstallOutcome::already_installed) {
      std::cout << fmt::format("already installed: channel {} serial {} under {} ({})\n", r.channel, r.serial,
                               r.root.string(),
                               r.environment_updated
                                 ? "no cache written; the variables env/exec export recorded again for this "
                                   "trust policy's install.environment"
                                 : "nothing written");
      return;
    }
    std::cout << fmt::format("installed: channel {} serial {} under {} in {:.3f} s\n", r.channel, r.serial,
                             r.root.string(), r.seconds);
    for (const auto& s : r.selected) {
      std::cout << fmt::format("  slice {} for {}\n", s.slice_id, s.device);
    }
    std::cout << fmt::format("  version {} (the current one; env/exec export its paths)\n", r.version);
    // One line for the caches, not a commit method per kind: every kind is
    // a directory of the version, published with it by one rename.
    std::string kinds;
    for (const auto& c : r.commits) {
      kinds += fmt::format("{}{}", kinds.empty() ? "" : ", ", c.kind);
    }
    if (!kinds.empty()) {
      std::cout << fmt::format("  caches {} (each at {}/<kind>)\n", kinds, r.root.string());
    }
  }

  Status run() const
  {
    auto report = install();
    if (report) {
      print(*report);
      return {};
    }
    if (on_failure == "warn") {
      // Exit 0 on purpose: the application must start, and JIT still works.
      // True to what `exec` will do next: serve what an earlier install left
      // (when `env` would export it), or nothing.
      if (!root.empty() && install::environment(root)) {
        log::warn("not installed: {}; the caches installed earlier under {} stay in use", report.error().describe(),
                  root);
      } else {
        log::warn("not installed: {}; the application will compile kernels itself (JIT)", report.error().describe());
      }
      if (json) {
        std::cout << nlohmann::json({{k_json_schema_version_key, k_json_schema_version},
                                     {"installed", false},
                                     {"code", report.error().code()},
                                     {"category", to_string(report.error().category())},
                                     {"reason", report.error().message()}})
                       .dump(2)
                  << "\n";
      }
      return {};
    }
    return fail(std::move(report).error());
  }
};

} // namespace

void
add_install_command(CLI::App& app, Action& action)
{
  auto command = std::make_shared<InstallCommand>();
  auto* sub = app.add_subcommand("install", "verify a bundle and install the slices for this host under a cache root");
  sub->add_option("bundle", command->bundle_dir,
                  "bundle directory, or registry reference pinned by digest (REGISTRY/REPO@sha256:HEX)");
  add_trust_options(*sub, command->trust);
  add_registry_options(*sub, command->registry);
  sub->add_option("--root", command->root,
                  "cache root (ROOT/<kind> are the live caches); default: the trust policy's install.root");
  sub->add_option("--on-failure", command->on_failure,
                  "fail: exit 1/3/4 on failure; warn: print the reason, exit 0 (container entrypoints)")
    ->check(CLI::IsMember({"fail", "warn"}))
    ->capture_default_str();
  sub->add_option("--lock-timeout", command->lock_timeout, "how long to wait for another installer (30s, 5m)")
    ->capture_default_str();
  sub->add_option("--owner", command->owner,
                  "UID:GID that owns the installed caches (root installers; overrides the policy's install.owner)");
  sub->add_flag("--replace-channel", command->replace_channel,
                "replace a bundle of another channel installed under the root (default: refuse)");
  sub->add_option("--ignore-requirement", command->ignored_requirements,
                  "install a slice even where this host differs in requirement KEY (e.g. intel.igc), with a "
                  "warning naming the difference; repeatable")
    ->type_name("KEY");
  sub->add_option("--space-margin", command->space_margin,
                  "free space kept beyond the caches: a size (0, 512K, 8M) or a percentage of the caches (25%); "
                  "default 10%, at least 1 MiB")
    ->type_name("SIZE|PCT%");
  sub->add_flag("--json", command->json, "machine-readable result on stdout");
  sub->callback([command, &action] { action = [command] { return command->run(); }; });
}

} // namespace prewarm::runtime_cli
