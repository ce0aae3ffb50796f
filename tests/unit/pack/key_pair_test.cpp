// SPDX-License-Identifier: Apache-2.0
#include "base/files.hpp"
#include "bundle/public_key.hpp"
#include "pack/key_pair.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

namespace prewarm::pack {
namespace {

namespace fs = std::filesystem;

unsigned
mode_of(const fs::path& p)
{
  struct stat st{};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

TEST(KeyPair, GenerateWritesPrivate0600AndPublic)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  const auto prefix = dir->path() / "keys" / "test_only_release";
  const auto files = generate_key_pair(prefix);
  ASSERT_TRUE(files) << files.error().message();
  EXPECT_EQ(files->private_key, dir->path() / "keys" / "test_only_release.key");
  EXPECT_EQ(mode_of(files->private_key), 0600u);
  EXPECT_EQ(mode_of(files->public_key), 0644u);
  const auto key = PrivateKey::load(files->private_key);
  ASSERT_TRUE(key) << key.error().message();
  const auto pub = bundle::PublicKey::load(files->public_key);
  ASSERT_TRUE(pub) << pub.error().message();
  EXPECT_EQ(key->key_id(), pub->key_id());
  EXPECT_EQ(files->key_id, pub->key_id());
  const auto sig = key->sign("message");
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->size(), 64u);
  EXPECT_TRUE(pub->verify("message", *sig));
  EXPECT_FALSE(pub->verify("messagE", *sig));
}

TEST(KeyPair, RefusesToOverwriteUnlessReplacing)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  const auto prefix = dir->path() / "test_only";
  const auto first = generate_key_pair(prefix);
  ASSERT_TRUE(first);
  const auto original = *read_file(first->private_key.string());
  const auto again = generate_key_pair(prefix);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().category(), Errc::usage);
  EXPECT_NE(again.error().message().find("--force"), std::string::npos);
  EXPECT_EQ(*read_file(first->private_key.string()), original);
  const auto replaced = generate_key_pair(prefix, ExistingKeyFiles::replace);
  ASSERT_TRUE(replaced) << replaced.error().message();
  EXPECT_NE(replaced->key_id, first->key_id);
  EXPECT_EQ(mode_of(replaced->private_key), 0600u);
}

TEST(KeyPair, RefusesGroupOrWorldReadableKey)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  const auto files = generate_key_pair(dir->path() / "test_only");
  ASSERT_TRUE(files);
  ASSERT_EQ(::chmod(files->private_key.c_str(), 0640), 0);
  const auto key = PrivateKey::load(files->private_key);
  ASSERT_FALSE(key);
  EXPECT_EQ(key.error().category(), Errc::usage);
  EXPECT_NE(key.error().message().find("chmod 600"), std::string::npos) << key.error().message();
}

TEST(KeyPair, RefusesSymlinkedKeyAndGarbage)
{
  auto dir = TempDir::create("prewarm-test-");
  ASSERT_TRUE(dir);
  const auto files = generate_key_pair(dir->path() / "test_only");
  ASSERT_TRUE(files);
  fs::create_symlink(files->private_key, dir->path() / "link.key");
  EXPECT_FALSE(PrivateKey::load(dir->path() / "link.key"));
  EXPECT_FALSE(PrivateKey::from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"));
}

} // namespace
} // namespace prewarm::pack
