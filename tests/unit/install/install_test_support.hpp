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

#include <filesystem>
#include <map>
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

struct BundleFactory
{
  explicit BundleFactory(const fs::path& work);

  // One slice per entry: id -> (files, requirements).
  struct SliceSpec
  {
    std::string id;
    Files files; // "<kind>/<rel>" -> content
    std::vector<bundle::Requirement> requirements;
    std::vector<bundle::CustomCache> caches = {};     // custom/<name>/... in files
    std::vector<bundle::EnvSetting> environment = {}; // runtime env
  };

  // Writes a bundle signed by `key` (default: the factory's test_only key).
  fs::path write(const std::string& name, std::uint64_t serial, const std::vector<SliceSpec>& slices,
                 const pack::PrivateKey* key = nullptr, std::string channel = "default",
                 SysSeconds issued_at = now_seconds() - std::chrono::hours(1),
                 SysSeconds expires = now_seconds() + std::chrono::hours(24 * 30));

  bundle::TrustStore trust() const;

  fs::path work;
  pack::PrivateKey test_only_key;
  int counter = 0;
};

// A CPU-only host like this machine's PoCL device.
std::vector<host::HostDevice> cpu_host();

std::vector<bundle::Requirement> requires_cpu();

} // namespace prewarm::test
