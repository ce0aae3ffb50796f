// SPDX-License-Identifier: Apache-2.0
// signing-archives.md §7 58: who owns the installed files. The payload's tar
// headers carry uid/gid 4242:4243 (pax records) that must never apply:
//   - as root with the policy's install.owner 3001:3002, every installed file
//     and directory is 3001:3002;
//   - as root without install.owner, everything is the installer's (0:0);
//   - as non-root (setpriv to nobody) with install.owner set, no chown call is
//     made at all (strace counts them) and the install succeeds.
#include "security_support.hpp"

#include "bundle_test_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

using namespace prewarm;
using namespace prewarm::security_test;

namespace {

// Every entry under `top` (itself included) with its uid:gid.
std::vector<std::pair<std::string, std::string>>
owners(const fs::path& top)
{
  std::vector<std::pair<std::string, std::string>> out;
  const auto add = [&](const fs::path& p) {
    struct stat st{};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    out.emplace_back(p.string(), std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid));
  };
  add(top);
  for (const auto& e : fs::recursive_directory_iterator(top)) {
    add(e.path());
  }
  return out;
}

} // namespace

class Owner : public Security
{
protected:
  // A bundle whose tar headers name uid/gid 4242:4243 for every entry.
  fs::path archive_uid_bundle(const std::string& name, std::uint64_t serial)
  {
    const auto good = factory->write(name + "-base", serial, {{"cpu", {{"pocl/aa/k.bin", "kernel"}}, test::requires_cpu()}});
    const std::vector<std::pair<std::string, std::string>> ids = {{"uid", "4242"}, {"gid", "4243"}};
    const auto tar = test::RawTar()
                       .pax('x', ids).dir("pocl")
                       .pax('x', ids).dir("pocl/aa")
                       .pax('x', ids).file("pocl/aa/k.bin", "kernel")
                       .finish();
    const auto bundle = copy_bundle(good, name);
    replace_payload(bundle, "cpu", test::zstd_compress(tar), [](bundle::Slice& s) {
      s.directories = {"pocl", "pocl/aa"};
      s.files = {test::file_entry("pocl/aa/k.bin", "kernel")};
      s.uncompressed_size = 6;
      s.entry_count = 3;
    });
    return bundle;
  }
};

TEST_F(Owner, F58_RootInstallsWithThePolicyOwnerNeverTheArchiveOwner)
{
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root";
  }
  const auto policy_file = policy("install:\n  owner: \"3001:3002\"\n");
  const auto run = install(archive_uid_bundle("owned", 2), "", policy_file);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const auto& [path, owner] : owners(test::current_version(root) / "pocl")) {
    EXPECT_EQ(owner, "3001:3002") << path;
  }
  EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
}

TEST_F(Owner, F58_RootWithoutAPolicyOwnerKeepsItsOwnNeverTheArchiveOwner)
{
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root";
  }
  const auto run = install(archive_uid_bundle("unowned", 2));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto self = std::to_string(::geteuid()) + ":" + std::to_string(::getegid());
  for (const auto& [path, owner] : owners(test::current_version(root) / "pocl")) {
    EXPECT_EQ(owner, self) << path;
  }
}

TEST_F(Owner, F58_NonRootAttemptsNoChown)
{
  if (::geteuid() != 0 || !have_tool("setpriv") || !have_tool("strace")) {
    GTEST_SKIP() << "needs root (to drop to nobody), setpriv and strace";
  }
  // A root and bundle that nobody (65534) can use.
  const auto nobody_root = dir.path() / "nobody-root";
  fs::create_directories(nobody_root);
  const auto bundle = archive_uid_bundle("nobody", 2);
  const auto policy_file = policy("install:\n  owner: \"3001:3002\"\n");
  const auto trace = work / "chown.trace";
  for (const auto& p : {dir.path(), nobody_root, work, bundle.parent_path(), bundle}) {
    ::chmod(p.c_str(), 0755);
  }
  ASSERT_EQ(::chown(nobody_root.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chown(work.c_str(), 65534, 65534), 0);
  for (const auto& e : fs::recursive_directory_iterator(bundle)) {
    ::chmod(e.path().c_str(), e.is_directory() ? 0755 : 0644);
  }
  ::chmod(policy_file.c_str(), 0644);
  ::chmod(pub.c_str(), 0644);
  const auto run = run_shell(work, host_env + " strace -f -qq -o " + trace.string() +
                                     " -e trace=chown,fchown,lchown,fchownat setpriv --reuid=65534 --regid=65534 "
                                     "--clear-groups " PREWARM_RUNTIME_BINARY " install " + bundle.string() +
                                     " --trust " + policy_file.string() + " --root " + nobody_root.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // setpriv itself makes no chown call either: any line is the installer's.
  const auto calls = slurp(trace);
  EXPECT_EQ(calls.find("chown"), std::string::npos) << calls;
  EXPECT_NE(run.err.find("install.owner 3001:3002 not applied"), std::string::npos) << run.err;
  for (const auto& [path, owner] : owners(test::current_version(nobody_root) / "pocl")) {
    EXPECT_EQ(owner, "65534:65534") << path;
  }
}
