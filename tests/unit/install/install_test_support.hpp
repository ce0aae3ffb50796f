// SPDX-License-Identifier: Apache-2.0
// Helpers for installer tests: cache trees on disk, real signed bundles
// (prewarm/pack writer, a test_only key), and a tree hash to prove that a
// failed install left the previous cache byte-identical.
#pragma once

#include "base/files.hpp"
#include "bundle/trust.hpp"
#include "host/host_device.hpp"
#include "pack/bundle_writer.hpp"
#include "pack/key_pair.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::test {

namespace fs = std::filesystem;

// relative path -> content; a directory is created for each parent.
using Files = std::map<std::string, std::string>;

void write_tree(const fs::path& dir, const Files& files);

// sha256 over sorted relative paths + type + mode + contents (symlink
// targets for links). Directory mtimes are not part of it.
std::string tree_hash(const fs::path& dir);

// The version directory the marker under `root` names now
// (ROOT/.prewarm/versions/<id>); empty when nothing is installed.
fs::path current_version(const fs::path& root);

// mtime (ns) of every regular file under dir, by relative path.
std::map<std::string, long long> file_mtimes(const fs::path& dir);

TempDir scratch();

// ASSERT_TRUE(succeeded(install(...))): a failed call prints its error code
// and message instead of "false".
template <class T>
::testing::AssertionResult
succeeded(const Result<T>& result)
{
  if (result) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "failed with " << result.error().code() << ": " << result.error().message();
}

struct BundleFactory
{
  // `now` is the factory's clock: every bundle it writes takes its issued-at and
  // expiry from it, not from the wall clock, so that writing the same bundle
  // twice yields the same bytes. (Read at each write, a clock that ticked
  // between two writes of one serial made two different bundles, which the
  // installer rightly refuses as E_ROLLBACK_EQUIVOCATION.)
  explicit BundleFactory(const fs::path& work, SysSeconds now = now_seconds());

  // One slice per entry: id -> (files, requirements).
  struct SliceSpec
  {
    std::string id;
    Files files; // "<kind>/<rel>" -> content
    std::vector<bundle::Requirement> requirements;
    std::vector<bundle::CustomCache> caches = {};     // custom/<name>/... in files
    std::vector<bundle::EnvSetting> environment = {}; // runtime env
  };

  // Writes a bundle signed by `key` (default: the factory's test_only key),
  // issued an hour before `now` and expiring 30 days after it unless given.
  fs::path write(const std::string& name, std::uint64_t serial, const std::vector<SliceSpec>& slices,
                 const pack::PrivateKey* key = nullptr, std::string channel = "default",
                 std::optional<SysSeconds> issued_at = std::nullopt, std::optional<SysSeconds> expires = std::nullopt);

  bundle::TrustStore trust() const;

  fs::path work;
  SysSeconds now;
  pack::PrivateKey test_only_key;
  int counter = 0;
};

// A CPU-only host like this machine's PoCL device.
std::vector<host::HostDevice> cpu_host();

std::vector<bundle::Requirement> requires_cpu();

} // namespace prewarm::test
