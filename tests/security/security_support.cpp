// SPDX-License-Identifier: Apache-2.0
#include "security_support.hpp"

#include "base/digest.hpp"
#include "base/files.hpp"
#include "bundle/bundle_files.hpp"
#include "install/install_layout.hpp"
#include "pack/manifest_signer.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>

#include <fstream>

namespace prewarm::security_test {

std::string
slurp(const fs::path& path)
{
  return read_file(path.string()).value_or("");
}

void
write_text(const fs::path& path, std::string_view text)
{
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

namespace {

// Raw classic BPF (no libseccomp): on x86-64, openat2 -> ERRNO(error_number),
// everything else allowed; another architecture is left alone.
bool
block_openat2(int error_number)
{
  sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<unsigned>(error_number) & SECCOMP_RET_DATA)),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    return false;
  }
  // Probe: a real openat2 of "/" must now fail with exactly that errno.
  open_how how{};
  how.flags = O_RDONLY;
  errno = 0;
  const long fd = ::syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
  return fd < 0 && errno == error_number;
}

} // namespace

Outcome
run_shell(const fs::path& work, const std::string& command, int openat2_errno)
{
  const auto out = work / "stdout";
  const auto err = work / "stderr";
  // The group keeps the shell's own "Killed" notices (kill -9 cases) off the test log.
  const std::string full = "exec 2>/dev/null; ( " + command + " ) >" + out.string() + " 2>" + err.string();
  int status = 0;
  if (openat2_errno == 0) {
    status = std::system(full.c_str());
  } else {
    const pid_t child = ::fork();
    if (child == 0) {
      if (!block_openat2(openat2_errno)) {
        ::_exit(99);
      }
      ::execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

Files
baseline_files()
{
  return {{"pocl/aa/kernel.bin", "baseline kernel"}, {"pocl/bb/other.bin", std::string(5000, 'b')}};
}

Files
newer_files()
{
  return {{"pocl/aa/kernel.bin", "newer kernel"}, {"pocl/cc/third.bin", std::string(7000, 'c')}};
}

void
Security::SetUp()
{
  work = dir.path() / "work";
  root = dir.path() / "root";
  outside = dir.path() / "outside";
  fs::create_directories(work);
  test::write_tree(outside, {{"victim/secret", "do not touch"}, {"etc/passwd", "root:x:0:0"}});
  factory = std::make_unique<test::BundleFactory>(dir.path() / "bundles");
  fs::create_directories(factory->work);
  pub = dir.path() / "test_only.pub";
  write_text(pub, factory->test_only_key.public_key().to_pem());
  const auto host_file = dir.path() / "host.json";
  write_text(host_file, R"([{"description": "test cpu", "vendor": "cpu"}])");
  host_env = "PREWARM_HOST_DEVICES=" + host_file.string();

  baseline_bundle = factory->write("baseline", 1, {{"cpu", baseline_files(), test::requires_cpu()}});
  const auto first = install(baseline_bundle);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  root_hash_before = test::tree_hash(root);
  outside_hash_before = test::tree_hash(outside);
}

Outcome
Security::install(const fs::path& bundle, const std::string& extra, const fs::path& trust)
{
  return run_shell(work, host_env + " " PREWARM_RUNTIME_BINARY " install " + bundle.string() + " --trust " +
                           (trust.empty() ? pub : trust).string() + " --root " + root.string() + " " + extra,
                   openat2_errno);
}

Outcome
Security::verify(const fs::path& bundle, const std::string& extra, const fs::path& trust)
{
  return run_shell(work, host_env + " " PREWARM_RUNTIME_BINARY " verify " + bundle.string() + " --trust " +
                           (trust.empty() ? pub : trust).string() + " " + extra,
                   openat2_errno);
}

fs::path
Security::good_bundle(std::uint64_t serial, std::string channel)
{
  return factory->write("good-" + std::to_string(bundle_counter++), serial,
                        {{"cpu", newer_files(), test::requires_cpu()}}, nullptr, std::move(channel));
}

fs::path
Security::copy_bundle(const fs::path& bundle, const std::string& name)
{
  const auto out = dir.path() / "bundles" / name;
  fs::copy(bundle, out, fs::copy_options::recursive);
  return out;
}

void
Security::resign(const fs::path& bundle, std::string_view bytes, const pack::PrivateKey* key)
{
  const pack::PrivateKey& signer = key ? *key : factory->test_only_key;
  auto envelope = pack::sign_manifest(bytes, std::span<const pack::PrivateKey>(&signer, 1));
  ASSERT_TRUE(envelope) << envelope.error().message();
  write_text(bundle / bundle::k_manifest_file, bytes);
  write_text(bundle / bundle::k_signature_file, *envelope);
}

void
Security::edit_manifest(const fs::path& bundle, const std::function<void(bundle::BundleManifest&)>& edit)
{
  auto parsed = bundle::parse(slurp(bundle / bundle::k_manifest_file));
  ASSERT_TRUE(parsed) << parsed.error().message();
  edit(*parsed);
  resign(bundle, bundle::serialize(*parsed));
}

void
Security::replace_payload(const fs::path& bundle, std::string_view slice_id, std::string_view payload,
                          const std::function<void(bundle::Slice&)>& edit)
{
  write_text(bundle::slice_payload_path(bundle, slice_id), payload);
  edit_manifest(bundle, [&](bundle::BundleManifest& m) {
    for (auto& s : m.slices) {
      if (s.id == slice_id) {
        s.payload_sha256 = sha256_hex(payload);
        s.payload_size = payload.size();
        if (edit) {
          edit(s);
        }
      }
    }
  });
}

fs::path
Security::policy(const std::string& extra, const std::string& name)
{
  const auto path = dir.path() / name;
  write_text(path, "version: 1\nkeys:\n  - file: test_only.pub\n" + extra);
  return path;
}

void
Security::expect_untouched()
{
  EXPECT_EQ(test::tree_hash(root), root_hash_before) << "the previous cache changed";
  EXPECT_EQ(test::tree_hash(outside), outside_hash_before) << "something was written outside the root";
  const auto meta = install::meta_dir(root);
  for (const auto& entry : fs::directory_iterator(meta)) {
    const auto name = entry.path().filename().string();
    EXPECT_FALSE(name.starts_with(install::k_staging_prefix)) << "staging left: " << name;
    EXPECT_NE(name, install::k_committing_file) << "committing note left";
  }
}

void
Security::expect_refused(const Outcome& run, int exit_code, const std::string& error_code)
{
  EXPECT_EQ(run.exit_code, exit_code) << run.err;
  EXPECT_NE(run.err.find(error_code), std::string::npos) << "expected " << error_code << " in:\n" << run.err;
  expect_untouched();
}

bool
have_tool(const char* tool)
{
  return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

} // namespace prewarm::security_test
