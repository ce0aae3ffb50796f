// SPDX-License-Identifier: Apache-2.0
// prewarm inspect BUNDLE [--json] [--trust PUB]
#include "cli/commands.hpp"

#include "bundle/trust.hpp"
#include "pack/inspect.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

namespace prewarm::cli {

namespace {

struct InspectOptions
{
  std::string bundle;
  std::string trust;
  bool json = false;
};

Status
run_inspect(const InspectOptions& options)
{
  std::optional<bundle::TrustStore> trust;
  if (!options.trust.empty()) {
    PW_ASSIGN(trust, bundle::load_trust_from_public_key(options.trust));
  }
  PW_ASSIGN(const auto description, pack::inspect_bundle(options.bundle, trust, now_seconds()));
  fmt::print("{}", options.json ? pack::format_json(description) : pack::format_text(description));
  return {};
}

} // namespace

void
add_inspect_command(CLI::App& app, Action& action)
{
  auto options = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand("inspect", "describe a bundle: header, slices, requirements, kinds, jobs");
  cmd->add_option("bundle", options->bundle, "bundle directory")->required();
  cmd->add_flag("--json", options->json, "one JSON object on stdout");
  cmd->add_option("--trust", options->trust, "public key (.pub) to verify the signature with");
  cmd->callback([&action, options] { action = [options] { return run_inspect(*options); }; });
}

} // namespace prewarm::cli
