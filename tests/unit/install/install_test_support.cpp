// SPDX-License-Identifier: Apache-2.0
#include "install_test_support.hpp"

#include "base/digest.hpp"
#include "install/install_layout.hpp"
#include "install/install_records.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

namespace prewarm::test {

void
write_tree(const fs::path& dir, const Files& files)
{
  for (const auto& [relative, content] : files) {
    const auto path = dir / relative;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  }
}

std::string
tree_hash(const fs::path& dir)
{
  std::vector<std::string> lines;
  if (!fs::exists(fs::symlink_status(dir))) {
    return "absent";
  }
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const auto& path = it->path();
    struct stat st{};
    ::lstat(path.c_str(), &st);
    std::string line = fs::relative(path, dir).string() + "\t" + std::to_string(st.st_mode) + "\t";
    if (S_ISREG(st.st_mode)) {
      line += *sha256_hex_of_file(path.string());
    } else if (S_ISLNK(st.st_mode)) {
      line += fs::read_symlink(path).string();
    }
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  Sha256 h;
  for (const auto& l : lines) {
    h.update(l);
    h.update("\n");
  }
  return h.finish_hex();
}

fs::path
current_version(const fs::path& root)
{
  auto marker = install::read_marker(root);
  if (!marker || !*marker || (*marker)->version.empty()) {
    return {};
  }
  return install::versions_dir(root) / (*marker)->version;
}

std::map<std::string, long long>
file_mtimes(const fs::path& dir)
{
  std::map<std::string, long long> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    struct stat st{};
    ::lstat(it->path().c_str(), &st);
    if (S_ISREG(st.st_mode)) {
      out[fs::relative(it->path(), dir).string()] = st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
    }
  }
  return out;
}

TempDir
scratch()
{
  auto dir = TempDir::create("prewarm-install-test-");
  EXPECT_TRUE(dir);
  return std::move(*dir);
}

BundleFactory::BundleFactory(const fs::path& work_dir, SysSeconds clock_now)
  : work(work_dir), now(clock_now), test_only_key(*pack::PrivateKey::generate())
{
}

fs::path
BundleFactory::write(const std::string& name, std::uint64_t serial, const std::vector<SliceSpec>& slices,
                     const pack::PrivateKey* key, std::string channel, std::optional<SysSeconds> issued_at,
                     std::optional<SysSeconds> expires)
{
  pack::BundleSpec spec;
  spec.channel = std::move(channel);
  spec.serial = serial;
  spec.issued_at = issued_at.value_or(now - std::chrono::hours(1));
  spec.expires = expires.value_or(now + std::chrono::hours(24 * 30));
  spec.build_manifest_sha256 = sha256_hex("test_only build manifest");
  for (const auto& s : slices) {
    const auto staging = work / ("staging-" + std::to_string(counter++));
    write_tree(staging, s.files);
    spec.slices.push_back({s.id, staging, s.requirements, {"test_only job for " + s.id}, s.caches, s.environment});
  }
  const auto out = work / name;
  const pack::PrivateKey& signer = key ? *key : test_only_key;
  auto written = pack::write_bundle(spec, std::span<const pack::PrivateKey>(&signer, 1), out);
  EXPECT_TRUE(written) << written.error().message();
  return out;
}

bundle::TrustStore
BundleFactory::trust() const
{
  bundle::TrustStore store;
  store.keys.push_back({test_only_key.public_key(), std::nullopt, std::nullopt});
  return store;
}

std::vector<host::HostDevice>
cpu_host()
{
  return {{"test cpu", {{"vendor", "cpu"}, {"opencl.device", "cpu-test"}}}};
}

std::vector<bundle::Requirement>
requires_cpu()
{
  return {{"vendor", "==", "cpu"}};
}

} // namespace prewarm::test
