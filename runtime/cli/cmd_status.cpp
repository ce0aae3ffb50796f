// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime status --root DIR [--json] [--audit]
// What is installed, what it was made for, and warnings where this host's
// GPU or driver differs from that; with --audit, per kind what was compiled
// anew since install (install/install_audit.hpp: files under ROOT/<kind>
// that the install did not put there), with one summary line on stderr.
#include "base/json_schema.hpp"
#include "base/log.hpp"
#include "cli/runtime_commands.hpp"
#include "host/host_description_file.hpp"
#include "host/probe_host.hpp"
#include "audit/layer_audit_log.hpp"
#include "install/install_audit.hpp"
#include "install/install_status.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>

namespace prewarm::runtime_cli {

namespace {

struct StatusCommand
{
  std::string root;
  bool json = false;
  bool audit = false;

  Status run() const
  {
    auto devices = host::probe_host();
    if (!devices) {
      log::warn("host not probed: {}", devices.error().describe());
      devices = std::vector<host::HostDevice>{};
    }
    PW_ASSIGN(const auto status, install::read_install_status(root, *devices));
    std::optional<install::InstallAudit> made;
    if (audit) {
      PW_ASSIGN_CTX(const auto baseline, "audit", install::read_audit_baseline(root));
      const char* layer_log = std::getenv(std::string(audit::k_layer_audit_log_variable).c_str());
      PW_ASSIGN_CTX(made, "audit", install::audit_install(baseline, nullptr, layer_log ? layer_log : ""));
      log::info("{}", install::summary_line(*made));
    }
    if (json) {
      auto out = install::to_json(status);
      out[k_json_schema_version_key] = k_json_schema_version;
      out["host_devices"] = nlohmann::json::parse(host::host_description_json(*devices));
      if (made) {
        out["audit"] = install::to_json(*made);
      }
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << install::to_text(status);
      if (made) {
        std::cout << "audit (since install; reuse is measured by exec --audit):\n";
        for (const auto& k : made->usage.kinds) {
          std::cout << "  " << k.summary() << "\n";
        }
      }
      std::cout << "host:\n" << host::describe_host(*devices) << "\n";
    }
    if (status.interrupted) {
      return fail(Errc::failed, fmt::format("an install under {} was interrupted; run the install again",
                                            status.root.string()),
                  "E_INTERRUPTED");
    }
    return {};
  }
};

} // namespace

void
add_status_command(CLI::App& app, Action& action)
{
  auto command = std::make_shared<StatusCommand>();
  auto* sub = app.add_subcommand("status", "show what is installed under a cache root and whether it fits this host");
  sub->add_option("--root", command->root, "cache root")->required();
  sub->add_flag("--json", command->json, "machine-readable result on stdout");
  sub->add_flag("--audit", command->audit, "what was compiled anew under ROOT since install, per kind, with names");
  sub->callback([command, &action] { action = [command] { return command->run(); }; });
}

} // namespace prewarm::runtime_cli
