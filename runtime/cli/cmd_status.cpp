// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime status --root DIR [--json]
// What is installed, what it was made for, and warnings where this host's
// GPU or driver differs from that.
#include "base/json_schema.hpp"
#include "base/log.hpp"
#include "cli/runtime_commands.hpp"
#include "host/host_description_file.hpp"
#include "host/probe_host.hpp"
#include "install/install_status.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace prewarm::runtime_cli {

namespace {

struct StatusCommand
{
  std::string root;
  bool json = false;

  Status run() const
  {
    auto devices = host::probe_host();
    if (!devices) {
      log::warn("host not probed: {}", devices.error().describe());
      devices = std::vector<host::HostDevice>{};
    }
    PW_ASSIGN(const auto status, install::read_install_status(root, *devices));
    if (json) {
      auto out = install::to_json(status);
      out[k_json_schema_version_key] = k_json_schema_version;
      out["host_devices"] = nlohmann::json::parse(host::host_description_json(*devices));
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << install::to_text(status);
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
  sub->callback([command, &action] { action = [command] { return command->run(); }; });
}

} // namespace prewarm::runtime_cli
