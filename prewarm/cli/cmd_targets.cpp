// SPDX-License-Identifier: Apache-2.0
// prewarm targets [--json] [--targets FILE]
// The target registry, and what this host can do for each target: run (the
// device is here), aot (ocloc can compile for it) or skip (and why).
#include "cli/commands.hpp"

#include "base/json_schema.hpp"
#include "bundle_build/host_capabilities.hpp"
#include "manifest/plan.hpp"
#include "manifest/target_registry.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace prewarm::cli {
namespace {

struct TargetsArgs
{
  std::string targets_file;
  bool json = false;
};

std::string
identity_of(const manifest::Target& target)
{
  switch (target.vendor) {
  case manifest::Vendor::cpu:
    return "OpenCL CPU";
  case manifest::Vendor::nvidia:
    return fmt::format("sm {}", target.sm);
  case manifest::Vendor::intel:
    return target.ip_version.empty() ? fmt::format("ocloc {}", target.ocloc_device)
                                     : fmt::format("ocloc {} ({})", target.ocloc_device, target.ip_version);
  }
  return {};
}

Status
run_targets(const TargetsArgs& args)
{
  PW_ASSIGN(const auto registry, args.targets_file.empty() ? manifest::TargetRegistry::embedded()
                                                           : manifest::TargetRegistry::load_file(args.targets_file));
  const auto host = bundle_build::probe_host_capabilities(registry);
  if (args.json) {
    nlohmann::json targets = nlohmann::json::array();
    for (const auto& target : registry.targets()) {
      const auto assessment = manifest::assess_target(target, host);
      nlohmann::json entry{{"name", target.name},
                           {"vendor", manifest::to_string(target.vendor)},
                           {"description", target.description},
                           {"pci_ids", target.pci_ids},
                           {"host", {{"strategy", manifest::to_string(assessment.strategy)},
                                     {"reason", assessment.reason}}}};
      if (target.vendor == manifest::Vendor::nvidia) {
        entry["sm"] = target.sm;
      }
      if (target.vendor == manifest::Vendor::intel) {
        entry["ocloc_device"] = target.ocloc_device;
        entry["ip_version"] = target.ip_version;
        entry["pci_revision"] = target.pci_revision;
        if (const auto* ocloc = host.ocloc_for(target.ocloc_device);
            ocloc != nullptr && assessment.strategy == manifest::Strategy::aot) {
          entry["host"]["toolchain"] = {{"origin", ocloc->origin}, {"version", ocloc->version}};
        }
      }
      if (assessment.device) {
        entry["host"]["device"] = assessment.device->description;
      }
      targets.push_back(std::move(entry));
    }
    nlohmann::json toolchains = nlohmann::json::array();
    for (const auto& ocloc : host.oclocs) {
      toolchains.push_back({{"path", ocloc.path}, {"version", ocloc.version}, {"origin", ocloc.origin}});
    }
    nlohmann::json out{{k_json_schema_version_key, k_json_schema_version},
                       {"registry", registry.source_name()},
                       {"ocloc", host.oclocs.empty() ? nlohmann::json{{"path", ""}, {"version", ""}}
                                                     : nlohmann::json{{"path", host.oclocs.front().path},
                                                                      {"version", host.oclocs.front().version}}},
                       {"toolchains", toolchains},
                       {"targets", targets}};
    fmt::print("{}\n", out.dump(2));
    return {};
  }
  std::size_t name_width = 6;
  std::size_t identity_width = 8;
  for (const auto& target : registry.targets()) {
    name_width = std::max(name_width, target.name.size());
    identity_width = std::max(identity_width, identity_of(target).size());
  }
  fmt::print("{:<{}}  {:<6}  {:<{}}  {:<5}  {}\n", "TARGET", name_width, "VENDOR", "IDENTITY", identity_width, "HOST",
             "WHY");
  for (const auto& target : registry.targets()) {
    const auto assessment = manifest::assess_target(target, host);
    fmt::print("{:<{}}  {:<6}  {:<{}}  {:<5}  {}\n", target.name, name_width, manifest::to_string(target.vendor),
               identity_of(target), identity_width, manifest::to_string(assessment.strategy), assessment.reason);
  }
  return {};
}

} // namespace

void
add_targets_command(CLI::App& app, Action& action)
{
  auto args = std::make_shared<TargetsArgs>();
  auto* cmd = app.add_subcommand("targets", "list the known targets and what this host can do for each "
                                            "(run, aot or skip)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_option("--targets", args->targets_file, "target registry file (default: the built-in registry)")
    ->check(CLI::ExistingFile);
  cmd->callback([&action, args] { action = [args] { return run_targets(*args); }; });
}

} // namespace prewarm::cli
