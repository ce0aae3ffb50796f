// SPDX-License-Identifier: Apache-2.0
// What env/exec export from an installed bundle beyond the built-in kinds
// (custom caches, runtime env), for whom (another user than the installer:
// private copies, unusable caches left unset), and one channel per root.
#include "install_test_support.hpp"

#include "base/files.hpp"
#include "audit/access_watch.hpp"
#include "install/application_environment.hpp"
#include "install/install_audit.hpp"
#include "install/install_layout.hpp"
#include "install/installer.hpp"
#include "bundle/runtime_variable.hpp"
#include "bundle/trust_policy.hpp"

#include <fmt/ranges.h>
#include <algorithm>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <map>

using namespace prewarm;
using namespace prewarm::test;

namespace {

constexpr uid_t k_nobody = 65534;

class UserEnvTest : public ::testing::Test
{
protected:
  TempDir dir = scratch();
  BundleFactory factory{dir.path()};
  fs::path root = dir.path() / "root";
  std::vector<host::HostDevice> host = cpu_host();

  BundleFactory::SliceSpec hashcat_slice()
  {
    return {"cpu",
            {{"pocl/ab/kernel.so", "pocl kernel"}, {"custom/hashcat/hashcat/kernels/m0.kernel", "hashcat kernel"}},
            requires_cpu(),
            {{"hashcat", "XDG_CACHE_HOME"}},
            {{"PYOPENCL_NO_CACHE", "1"}, {"QUOTED_VALUE", "it's $HOME"}}};
  }

  // QUOTED_VALUE is no vetted cache switch: this image's policy allows it.
  Result<install::InstallReport> install(const fs::path& bundle, install::InstallOptions options = {})
  {
    options.verify.policy.allowed_environment.insert("QUOTED_VALUE");
    return install::install_bundle(bundle, factory.trust(), root, host, options);
  }

  static std::map<std::string, std::string> as_map(const std::vector<bundle::EnvSetting>& settings)
  {
    std::map<std::string, std::string> out;
    for (const auto& s : settings) {
      out[s.name] = s.value;
    }
    return out;
  }

  // Runs `body` in a child process as uid/gid nobody; returns its exit code.
  static int as_nobody(const std::function<int()>& body)
  {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setresgid(k_nobody, k_nobody, k_nobody) != 0 ||
          ::setresuid(k_nobody, k_nobody, k_nobody) != 0) {
        ::_exit(90);
      }
      ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
  }
};

} // namespace

TEST_F(UserEnvTest, CustomCacheAndRuntimeEnvAreExportedWhileTheirSliceIsInstalled)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {hashcat_slice()}))));
  EXPECT_EQ(read_file((root / "custom/hashcat/hashcat/kernels/m0.kernel").string()).value_or(""), "hashcat kernel");
  auto env = install::application_environment(root);
  ASSERT_TRUE(env) << env.error().message();
  EXPECT_TRUE(env->warnings.empty()) << env->warnings.front();
  const auto vars = as_map(env->settings);
  EXPECT_EQ(vars.at("XDG_CACHE_HOME"), (current_version(root) / "custom/hashcat").string());
  EXPECT_EQ(vars.at("PYOPENCL_NO_CACHE"), "1");
  EXPECT_EQ(vars.at("POCL_CACHE_DIR"), (current_version(root) / "pocl").string());
  const auto shell = install::format_shell_exports(env->settings);
  EXPECT_NE(shell.find("export QUOTED_VALUE='it'\\''s $HOME'\n"), std::string::npos) << shell;
}

TEST_F(UserEnvTest, TheInstallersAuditCountsEachCustomCacheOnItsOwn)
{
  // Two custom caches; the application (the installing user, so no private
  // copy) uses one. Audited as one "custom" kind, the other cache's files
  // were counted as new since install, and the installed directories were
  // reported as private copies.
  auto slice = hashcat_slice();
  slice.files.emplace("custom/jax/jit_f-1-cache", "jax executable");
  slice.caches.push_back({"jax", "JAX_COMPILATION_CACHE_DIR"});
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {slice}))));
  auto env = install::application_environment(root);
  ASSERT_TRUE(env) << env.error().message();
  auto baseline = install::read_audit_baseline(root);
  ASSERT_TRUE(baseline) << baseline.error().message();
  install::follow_directories(*baseline, env->directories);
  EXPECT_TRUE(baseline->followed.empty()) << "the installed directory is no private copy";
  ASSERT_TRUE(install::take_run_start(*baseline));
  auto watch = audit::AccessWatch::start(baseline->kind_dirs);
  ASSERT_TRUE(watch) << watch.error().message();
  EXPECT_EQ(read_file((fs::path(as_map(env->settings).at("JAX_COMPILATION_CACHE_DIR")) / "jit_f-1-cache").string())
              .value_or(""),
            "jax executable");
  const auto record = (*watch)->stop();
  auto made = install::audit_install(*baseline, &record, "");
  ASSERT_TRUE(made) << made.error().message();
  EXPECT_EQ(made->usage.find("custom"), nullptr) << install::summary_line(*made);
  const auto* jax = made->usage.find("custom/jax");
  const auto* hashcat = made->usage.find("custom/hashcat");
  ASSERT_NE(jax, nullptr) << install::summary_line(*made);
  ASSERT_NE(hashcat, nullptr) << install::summary_line(*made);
  EXPECT_EQ(jax->reused_files, 1u);
  EXPECT_EQ(jax->new_files, 0u);
  EXPECT_TRUE(hashcat->untouched()) << hashcat->summary();
  EXPECT_EQ(install::summary_line(*made).find("private copies"), std::string::npos) << install::summary_line(*made);
}

TEST_F(UserEnvTest, TheAuditsCustomCachesAreDirectoriesNeverALinkFollowed)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {hashcat_slice()}))));
  // Not something an install makes: a link beside the caches, to a
  // directory elsewhere, is no cache of the bundle and is never walked.
  const auto elsewhere = dir.path() / "elsewhere";
  fs::create_directories(elsewhere / "inside");
  fs::create_directory_symlink(elsewhere, current_version(root) / "custom" / "linked");
  auto baseline = install::read_audit_baseline(root);
  ASSERT_TRUE(baseline) << baseline.error().message();
  EXPECT_TRUE(baseline->kind_dirs.contains("custom/hashcat"));
  EXPECT_FALSE(baseline->kind_dirs.contains("custom/linked"));
  EXPECT_FALSE(baseline->kind_dirs.contains("custom"));
}

TEST_F(UserEnvTest, ASliceThatIsNotInstalledExportsNothing)
{
  auto other = hashcat_slice();
  other.id = "gpu";
  other.requirements = {{"vendor", "==", "nvidia"}};
  other.environment = {{"ONLY_ON_GPU", "1"}};
  other.caches.clear();
  other.files = {{"cuda/x", "cuda"}};
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {hashcat_slice(), other}))));
  auto env = install::application_environment(root);
  ASSERT_TRUE(env);
  const auto vars = as_map(env->settings);
  EXPECT_FALSE(vars.contains("ONLY_ON_GPU"));
  EXPECT_TRUE(vars.contains("PYOPENCL_NO_CACHE"));
}

TEST_F(UserEnvTest, ADeniedNameInADamagedRootIsNeverExported)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {hashcat_slice()}))));
  // The root is not signed: someone rewrites the installed manifest copy.
  const auto copy = current_version(root) / install::k_version_manifest_file;
  auto text = read_file(copy.string()).value();
  const auto at = text.find("env PYOPENCL_NO_CACHE 1\n");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 24, "env LD_PRELOAD /tmp/x.so\n");
  ASSERT_TRUE(write_file_atomic(copy, text));
  auto env = install::application_environment(root);
  ASSERT_TRUE(env);
  const auto vars = as_map(env->settings);
  EXPECT_FALSE(vars.contains("LD_PRELOAD"));
  EXPECT_FALSE(vars.contains("XDG_CACHE_HOME")) << "nothing of a manifest copy that does not parse";
  EXPECT_TRUE(vars.contains("POCL_CACHE_DIR")) << "the built-in kinds still work";
  ASSERT_FALSE(env->warnings.empty());
  EXPECT_NE(env->warnings.front().find("E_DENIED_VARIABLE"), std::string::npos) << env->warnings.front();
}

// The allow list (bundle/runtime_variable.hpp): what a validly signed bundle
// asks for beyond the vetted names is refused, named with the rule, unless
// the trust policy names it; the deny list holds even then.
TEST_F(UserEnvTest, OnlyAllowedVariablesAreExportedAndARefusalNamesTheRule)
{
  auto slice = hashcat_slice();
  slice.environment = {{"CUDA_INJECTION64_PATH", "/tmp/inject.so"}, {"GIT_EXEC_PATH", "/tmp/git"},
                       {"OPENSSL_CONF", "/tmp/openssl.cnf"}, {"PYOPENCL_NO_CACHE", "1"},
                       {"SSL_CERT_FILE", "/tmp/ca.pem"}, {"TOOL_EXPECT", "from the policy"}};
  slice.caches = {{"hashcat", "XDG_CACHE_HOME"}, {"tool", "TORCH_EXTENSIONS_DIR"}};
  slice.files["custom/tool/x.so"] = "extension";
  install::InstallOptions options;
  options.verify.policy.allowed_environment = {"TOOL_EXPECT"};
  auto report = install::install_bundle(factory.write("b1", 1, {slice}), factory.trust(), root, host, options);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->warnings.size(), 5u) << "said at install, where the policy can still be changed";
  auto env = install::application_environment(root);
  ASSERT_TRUE(env) << env.error().message();
  const auto vars = as_map(env->settings);
  EXPECT_EQ(vars.at("TOOL_EXPECT"), "from the policy");
  EXPECT_EQ(vars.at("PYOPENCL_NO_CACHE"), "1");
  EXPECT_TRUE(vars.contains("XDG_CACHE_HOME"));
  for (const auto* refused : {"CUDA_INJECTION64_PATH", "GIT_EXEC_PATH", "OPENSSL_CONF", "SSL_CERT_FILE",
                              "TORCH_EXTENSIONS_DIR"}) {
    EXPECT_FALSE(vars.contains(refused)) << refused;
    const auto named = std::any_of(env->warnings.begin(), env->warnings.end(), [&](const std::string& w) {
      return w.find(refused) != std::string::npos && w.find("E_VARIABLE_NOT_ALLOWED") != std::string::npos &&
             w.find("install.environment") != std::string::npos;
    });
    EXPECT_TRUE(named) << refused << " refused without the rule: " << fmt::format("{}", fmt::join(env->warnings, "\n"));
  }
  // A vetted switch with a path for a value is no switch.
  EXPECT_FALSE(bundle::check_allowed_variable("PYOPENCL_NO_CACHE", "/tmp/x", bundle::VariableRole::runtime_env, {}));
  // A cache-locating name as runtime_env would point a cache anywhere.
  EXPECT_FALSE(bundle::check_allowed_variable("XDG_CACHE_HOME", "/tmp", bundle::VariableRole::runtime_env, {}));
}

// A re-install of the installed bundle under a policy with another
// install.environment writes no cache, but records what env/exec export
// again, and says so (it said "nothing written").
TEST_F(UserEnvTest, ReinstallUnderAnotherPolicyRecordsItsEnvironmentAndSaysSo)
{
  auto slice = hashcat_slice();
  slice.environment = {{"TOOL_EXPECT", "from the policy"}};
  const auto bundle = factory.write("b1", 1, {slice});
  install::InstallOptions allowing;
  allowing.verify.policy.allowed_environment = {"TOOL_EXPECT"};
  auto first = install::install_bundle(bundle, factory.trust(), root, host, allowing);
  ASSERT_TRUE(succeeded(first));
  EXPECT_FALSE(first->environment_updated);
  ASSERT_TRUE(succeeded(install::application_environment(root)));
  EXPECT_TRUE(as_map(install::application_environment(root)->settings).contains("TOOL_EXPECT"));

  auto narrower = install::install_bundle(bundle, factory.trust(), root, host, {});
  ASSERT_TRUE(succeeded(narrower));
  EXPECT_EQ(narrower->outcome, install::InstallOutcome::already_installed);
  EXPECT_TRUE(narrower->environment_updated) << "the record changed: the report must say so";
  EXPECT_FALSE(as_map(install::application_environment(root)->settings).contains("TOOL_EXPECT"));

  auto same = install::install_bundle(bundle, factory.trust(), root, host, {});
  ASSERT_TRUE(succeeded(same));
  EXPECT_EQ(same->outcome, install::InstallOutcome::already_installed);
  EXPECT_FALSE(same->environment_updated) << "nothing changed this time";
}

// install.environment in the trust policy: names beyond the allow list; a
// name of the deny list is a config error naming the field (no policy can
// lower that floor).
TEST(TrustPolicyEnvironment, NamesVariablesAndNeverADeniedOne)
{
  const auto tmp = scratch();
  const auto pem = BundleFactory(tmp.path()).test_only_key.public_key().to_pem();
  std::string keys = "version: 1\nkeys:\n  - pem: |\n";
  for (std::size_t at = 0; at < pem.size();) {
    const auto end = pem.find('\n', at);
    keys += "      " + pem.substr(at, end - at) + "\n";
    at = end == std::string::npos ? pem.size() : end + 1;
  }
  auto policy = bundle::parse_trust_policy(keys + "install:\n  environment: [TOOL_EXPECT, OMP_NUM_THREADS]\n", "/");
  ASSERT_TRUE(policy) << policy.error().message();
  EXPECT_EQ(policy->manifest.allowed_environment,
            (std::set<std::string, std::less<>>{"OMP_NUM_THREADS", "TOOL_EXPECT"}));
  auto denied = bundle::parse_trust_policy(keys + "install:\n  environment: [LD_PRELOAD]\n", "/");
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().category(), Errc::usage);
  EXPECT_NE(denied.error().message().find("install.environment[0]"), std::string::npos) << denied.error().message();
  EXPECT_NE(denied.error().message().find("no policy can allow it"), std::string::npos) << denied.error().message();
}

TEST_F(UserEnvTest, ASecondChannelIsRefusedUnlessReplacedOnPurpose)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {hashcat_slice()}, nullptr, "team/a"))));
  const auto before = tree_hash(root);
  const auto other = factory.write("b2", 1, {{"cpu", {{"pocl/cd/other.so", "b"}}, requires_cpu()}}, nullptr, "team/b");
  auto refused = install(other);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), "E_CHANNEL_OCCUPIED");
  EXPECT_NE(refused.error().message().find("team/a serial 1"), std::string::npos) << refused.error().message();
  EXPECT_NE(refused.error().message().find("--replace-channel"), std::string::npos);
  EXPECT_NE(refused.error().message().find("--root"), std::string::npos);
  EXPECT_EQ(tree_hash(root), before) << "a refused install wrote something";

  install::InstallOptions replace;
  replace.channels = install::ChannelReplacement::replace;
  auto replaced = install(other, replace);
  ASSERT_TRUE(replaced) << replaced.error().message();
  EXPECT_EQ(replaced->channel, "team/b");
}

TEST_F(UserEnvTest, AnotherUserGetsAPrivateWritableCopyOnce)
{
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to install as one user and run as another";
  }
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {hashcat_slice()}))));
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  const fs::path base = dir.path() / "private";
  fs::create_directory(base);
  ::chown(base.c_str(), k_nobody, k_nobody);
  const int rc = as_nobody([&] {
    install::UserAccessOptions access{base};
    auto first = install::application_environment(root, access);
    if (!first || !first->warnings.empty()) {
      return 1;
    }
    const auto vars = as_map(first->settings);
    const fs::path pocl = vars.at("POCL_CACHE_DIR");
    if (pocl.string().find(base.string()) != 0 || first->notes.size() != 2) {
      return 2;
    }
    if (read_file((pocl / "ab/kernel.so").string()).value_or("") != "pocl kernel") {
      return 3;
    }
    if (::access(pocl.c_str(), W_OK) != 0 || ::access(vars.at("XDG_CACHE_HOME").c_str(), W_OK) != 0) {
      return 4;
    }
    auto second = install::application_environment(root, access);
    if (!second || !second->notes.empty() || as_map(second->settings).at("POCL_CACHE_DIR") != pocl.string()) {
      return 5; // the copy is made once, then reused
    }
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

TEST_F(UserEnvTest, AnotherUsersAuditWatchesItsPrivateCopy)
{
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to install as one user and run as another";
  }
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {hashcat_slice()}))));
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  const fs::path base = dir.path() / "private";
  fs::create_directory(base);
  ::chown(base.c_str(), k_nobody, k_nobody);
  const int rc = as_nobody([&] {
    auto env = install::application_environment(root, install::UserAccessOptions{base});
    if (!env || env->directories.size() != 2) {
      return 1;
    }
    auto baseline = install::read_audit_baseline(root);
    if (!baseline) {
      return 2;
    }
    install::follow_directories(*baseline, env->directories);
    if (!install::take_run_start(*baseline)) {
      return 3;
    }
    auto watch = audit::AccessWatch::start(baseline->kind_dirs);
    if (!watch) {
      return 4;
    }
    // The application: reads what it was pointed at, and writes one kernel.
    const fs::path pocl = as_map(env->settings).at("POCL_CACHE_DIR");
    const fs::path xdg = as_map(env->settings).at("XDG_CACHE_HOME");
    if (read_file((pocl / "ab/kernel.so").string()).value_or("") != "pocl kernel" ||
        read_file((xdg / "hashcat/kernels/m0.kernel").string()).value_or("") != "hashcat kernel" ||
        !write_file_atomic(xdg / "hashcat/kernels/m1.kernel", "new", 0644, Durability::none)) {
      return 5;
    }
    const auto record = (*watch)->stop();
    auto made = install::audit_install(*baseline, &record, "");
    if (!made || !made->run) {
      return 6;
    }
    const auto* p = made->usage.find("pocl");
    const auto* h = made->usage.find("custom/hashcat");
    if (p == nullptr || p->reused_files != 1u || p->new_files != 0u) {
      return 7;
    }
    if (h == nullptr || h->reused_files != 1u || h->new_files != 1u || made->run->find("custom/hashcat") == nullptr) {
      return 8;
    }
    if (made->followed.size() != 2 || install::summary_line(*made).find("private copies of custom/hashcat, pocl") ==
                                        std::string::npos) {
      return 9;
    }
    return 0;
  });
  EXPECT_EQ(rc, 0) << "1 env, 2 baseline, 3 run start, 4 watch, 5 app, 6 audit, 7 pocl, 8 hashcat, 9 followed";
}

TEST_F(UserEnvTest, ACacheAnotherUserCannotReadIsLeftUnsetWithAWarning)
{
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to install as one user and run as another";
  }
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {hashcat_slice()}))));
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(root / "pocl", fs::perms::owner_all);
  const fs::path base = dir.path() / "private";
  fs::create_directory(base);
  ::chown(base.c_str(), k_nobody, k_nobody);
  const int rc = as_nobody([&] {
    auto env = install::application_environment(root, install::UserAccessOptions{base});
    if (!env) {
      return 1;
    }
    const auto vars = as_map(env->settings);
    if (vars.contains("POCL_CACHE_DIR") || !vars.contains("XDG_CACHE_HOME")) {
      return 2;
    }
    if (env->warnings.size() != 1 || env->warnings[0].find("POCL_CACHE_DIR left unset") == std::string::npos) {
      return 3;
    }
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

TEST_F(UserEnvTest, OwnerOptionGivesTheTreeToTheApplicationUser)
{
  if (::geteuid() != 0) {
    GTEST_SKIP() << "chown needs root";
  }
  install::InstallOptions options;
  options.verify.policy.install_owner = bundle::InstallOwner{k_nobody, k_nobody};
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {hashcat_slice()}), options)));
  struct stat st{};
  ASSERT_EQ(::stat((root / "custom/hashcat/hashcat/kernels/m0.kernel").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, k_nobody);
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  const int rc = as_nobody([&] {
    auto env = install::application_environment(root, install::UserAccessOptions{"/nonexistent"});
    // In place: no copy needed (the private base does not even exist).
    return env && env->notes.empty() && env->warnings.empty() &&
               as_map(env->settings).at("POCL_CACHE_DIR") == (current_version(root) / "pocl").string()
             ? 0
             : 1;
  });
  EXPECT_EQ(rc, 0);
}
