// SPDX-License-Identifier: Apache-2.0
// prewarm intel-profile --out FILE [--target NAME] [--driver-root DIR]
// Run once on a machine with the Intel card: writes the card's key profile
// (virtual_device/profile_measurement.hpp), which a manifest target then
// names.
#include "cli/commands.hpp"

#include "base/files.hpp"
#include "manifest/intel_profile.hpp"
#include "manifest/target_registry.hpp"
#include "virtual_device/profile_measurement.hpp"

#include <fmt/format.h>

#include <memory>

namespace prewarm::cli {
namespace {

struct IntelProfileArgs
{
  std::string out;
  std::string target;
  std::string driver_root;
};

Status
run_intel_profile(const IntelProfileArgs& args)
{
  // Checked before the builds: a profile measured for nothing is lost work.
  const std::filesystem::path out(args.out);
  const auto directory = out.has_parent_path() ? out.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) {
    return fail(Errc::usage, fmt::format("--out {}: no directory {}", args.out, directory.string()));
  }
  PW_ASSIGN(const auto registry, manifest::TargetRegistry::embedded());
  virtual_device::ProfileRequest request;
  request.target = args.target;
  if (!args.driver_root.empty()) {
    request.driver_root = args.driver_root;
  }
  PW_ASSIGN(const auto profile, virtual_device::measure_intel_profile(request, registry));
  const auto text = virtual_device::format_intel_profile(
    profile, fmt::format("Intel key profile of {} (format: prewarm/manifest/intel_profile.hpp), written by `prewarm "
                         "intel-profile`.\nName it in a manifest: targets: [{{name: {}, profile: FILE}}]",
                         profile.target, profile.target));
  // What is written must read back: the manifest reads it strictly.
  PW_TRY_CTX(fmt::format("the profile written to {}", args.out), manifest::parse_intel_profile(text, args.out));
  PW_TRY(write_file_atomic(out, text, 0644, Durability::fsync));
  fmt::print("{}: the key profile of {} ({}), {} unknown\n", args.out, profile.target, profile.device_name.value,
             profile.unknown.size());
  for (const auto& u : profile.unknown) {
    fmt::print("  unknown {}: {}\n", u.field, u.why);
  }
  return {};
}

} // namespace

void
add_intel_profile_command(CLI::App& app, Action& action)
{
  auto args = std::make_shared<IntelProfileArgs>();
  auto* cmd = app.add_subcommand("intel-profile", "measure this machine's Intel GPU: the inputs of its driver "
                                                  "cache keys, as a key profile a manifest target names");
  cmd->add_option("--out", args->out, "the profile file to write (YAML)")->required();
  cmd->add_option("--target", args->target,
                  "the registry's target the card is (default: the one listing its PCI id)");
  cmd->add_option("--driver-root", args->driver_root,
                  "measure the driver of an Intel root (./setup.sh intel-root) instead of the system's");
  cmd->callback([&action, args] { action = [args] { return run_intel_profile(*args); }; });
}

} // namespace prewarm::cli
