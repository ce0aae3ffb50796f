// SPDX-License-Identifier: Apache-2.0
// prewarm merge PARTIAL... --key K --out BUNDLE [--trust PUB]... [--allow-expired]
// Verifies the partial bundles of one sharded build and writes one bundle
// signed once (pack/merge.hpp).
#include "cli/commands.hpp"

#include "base/log.hpp"
#include "bundle/trust.hpp"
#include "pack/key_pair.hpp"
#include "pack/merge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace prewarm::cli {
namespace {

struct MergeArgs
{
  std::vector<std::string> partials;
  std::vector<std::string> key_files;
  std::vector<std::string> trust_files;
  std::string out;
  bool allow_expired = false;
};

Status
run_merge(const MergeArgs& args)
{
  std::vector<pack::PrivateKey> keys;
  for (const auto& file : args.key_files) {
    PW_ASSIGN(auto key, pack::PrivateKey::load(file));
    keys.push_back(std::move(key));
  }
  // Without --trust the partials must be signed by the merging key(s)
  // themselves; a separate CI shard key is named with --trust.
  bundle::TrustStore trust;
  if (args.trust_files.empty()) {
    for (const auto& key : keys) {
      trust.keys.push_back(bundle::TrustedKey{key.public_key(), {}, {}});
    }
  } else {
    for (const auto& file : args.trust_files) {
      PW_ASSIGN(auto store, bundle::load_trust_from_public_key(file));
      trust.keys.insert(trust.keys.end(), store.keys.begin(), store.keys.end());
    }
  }
  std::vector<std::filesystem::path> partials(args.partials.begin(), args.partials.end());
  PW_ASSIGN(const auto merged, pack::merge_bundles(partials, trust, keys, args.out, now_seconds(),
                                                          args.allow_expired ? pack::ExpiryPolicy::warn
                                                                             : pack::ExpiryPolicy::refuse));
  log::info("merged {} partial bundles ({} jobs) into {}; slices joined from several shards: {}; files "
            "that differed between shards (first job's copy kept): {}",
            merged.partial_count, merged.job_count, merged.bundle.dir.string(),
            merged.joined_slice_ids.empty() ? std::string("none")
                                            : fmt::format("{}", fmt::join(merged.joined_slice_ids, ", ")),
            merged.differing_files);
  fmt::print("{}  {}/manifest\n", merged.bundle.manifest_sha256, merged.bundle.dir.string());
  return {};
}

} // namespace

void
add_merge_command(CLI::App& app, Action& action)
{
  auto args = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand("merge", "verify the partial bundles of a sharded build and write one "
                                          "bundle, signed once");
  cmd->add_option("partials", args->partials, "partial bundle directories (prewarm build --shard I/N)")
    ->required()
    ->check(CLI::ExistingDirectory);
  cmd->add_option("--key", args->key_files, "private key that signs the merged bundle (repeatable)")
    ->required()
    ->check(CLI::ExistingFile);
  cmd->add_option("--trust", args->trust_files,
                  "public key the partials are verified with (repeatable; default: the --key keys)")
    ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "merged bundle directory")->required();
  cmd->add_flag("--allow-expired", args->allow_expired,
                "write the merged bundle even when it would expire within a day (the partials' SOURCE_DATE_EPOCH + "
                "bundle.expires); a warning instead of an error");
  cmd->footer("Prints '<manifest sha256>  <BUNDLE>/manifest' on stdout (sha256sum format).\n"
              "Exit: 0 ok, 1 failed, 2 usage, 3 a partial failed verification or the partials do not "
              "belong together.");
  cmd->callback([&action, args] { action = [args] { return run_merge(*args); }; });
}

} // namespace prewarm::cli
