// SPDX-License-Identifier: Apache-2.0
// prewarm keygen --out keys/NAME [--force]
#include "cli/commands.hpp"

#include "pack/key_pair.hpp"

#include <fmt/format.h>

#include <memory>
#include <string>

namespace prewarm::cli {

namespace {

struct KeygenOptions
{
  std::string prefix;
  bool force = false;
};

Status
run_keygen(const KeygenOptions& options)
{
  PW_ASSIGN(const auto files, pack::generate_key_pair(options.prefix, options.force ? pack::ExistingKeyFiles::replace
                                                                                     : pack::ExistingKeyFiles::refuse));
  fmt::print("key id       {}\n", files.key_id);
  fmt::print("private key  {} (mode 0600; keep it secret: it signs bundles)\n", files.private_key.string());
  fmt::print("public key   {} (give it to `prewarm-runtime --trust`)\n", files.public_key.string());
  return {};
}

} // namespace

void
add_keygen_command(CLI::App& app, Action& action)
{
  auto options = std::make_shared<KeygenOptions>();
  auto* cmd = app.add_subcommand("keygen", "make an Ed25519 key pair for signing bundles");
  cmd->add_option("--out", options->prefix, "path prefix: writes PREFIX.key (private, 0600) and PREFIX.pub")
    ->required();
  cmd->add_flag("--force", options->force, "replace existing key files");
  cmd->callback([&action, options] { action = [options] { return run_keygen(*options); }; });
}

} // namespace prewarm::cli
