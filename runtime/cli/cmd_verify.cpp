// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime verify BUNDLE --trust PUB [--json]
// Signature, manifest, validity period and every slice's payload digest;
// nothing is extracted or written. Exit 0 or 3 (verification failed).
#include "base/json_schema.hpp"
#include "base/log.hpp"
#include "cli/runtime_commands.hpp"
#include "cli/trust_options.hpp"
#include "install/bundle_verification.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace prewarm::runtime_cli {

namespace {

struct VerifyCommand
{
  std::string bundle_dir;
  TrustOptions trust;
  bool json = false;

  Status run() const
  {
    PW_ASSIGN(const auto store, load_trust(trust));
    PW_ASSIGN(const auto options, verify_options(trust));
    PW_ASSIGN(const auto verified, install::verify_bundle(bundle_dir, store, now_seconds(), options));
    for (const auto& w : verified.warnings) {
      log::warn("{}", w);
    }
    const auto& m = verified.manifest;
    if (json) {
      auto slices = nlohmann::json::array();
      for (const auto& s : m.slices) {
        slices.push_back({{"id", s.id},
                          {"payload_sha256", s.payload_sha256},
                          {"payload_size", s.payload_size},
                          {"uncompressed_size", s.uncompressed_size},
                          {"files", s.files.size()}});
      }
      nlohmann::json out = {{k_json_schema_version_key, k_json_schema_version},
                            {"bundle", bundle_dir},
                            {"verified", true},
                            {"manifest_sha256", verified.manifest_sha256},
                            {"signer_key_ids", verified.signer_key_ids},
                            {"channel", m.channel},
                            {"serial", m.serial},
                            {"issued_at", format_rfc3339(m.issued_at)},
                            {"expires", format_rfc3339(m.expires)},
                            {"slices", slices},
                            {"warnings", verified.warnings}};
      std::cout << out.dump(2) << "\n";
      return {};
    }
    std::cout << fmt::format("verified: {}\n", bundle_dir);
    for (const auto& key : verified.signer_key_ids) {
      std::cout << fmt::format("  signature: good, key {}\n", key);
    }
    std::cout << fmt::format("  manifest: sha256 {}, channel {}, serial {}\n", verified.manifest_sha256, m.channel,
                             m.serial);
    std::cout << fmt::format("  valid: issued {}, expires {}\n", format_rfc3339(m.issued_at), format_rfc3339(m.expires));
    for (const auto& s : m.slices) {
      std::cout << fmt::format("  slice {}: payload sha256 {} ({} bytes) matches; {} files, {} bytes\n", s.id,
                               s.payload_sha256, s.payload_size, s.files.size(), s.uncompressed_size);
    }
    return {};
  }
};

} // namespace

void
add_verify_command(CLI::App& app, Action& action)
{
  auto command = std::make_shared<VerifyCommand>();
  auto* sub = app.add_subcommand("verify", "check a bundle's signature, validity and payload digests (writes nothing)");
  sub->add_option("bundle", command->bundle_dir, "bundle directory")->required();
  add_trust_options(*sub, command->trust);
  sub->add_flag("--json", command->json, "machine-readable result on stdout");
  sub->callback([command, &action] { action = [command] { return command->run(); }; });
}

} // namespace prewarm::runtime_cli
