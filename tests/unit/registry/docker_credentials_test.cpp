// SPDX-License-Identifier: Apache-2.0
// Credentials as Docker writes them: auths (base64), credHelpers and
// credsStore (a real helper program: a test_only script on PATH speaking
// the docker-credential-helpers protocol).
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "registry/docker_credentials.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace prewarm::registry {
namespace {

namespace fs = std::filesystem;

class DockerCredentials : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = make_private_directory(fs::temp_directory_path(), "prewarm-creds-");
    ASSERT_TRUE(dir);
    m_dir = *dir;
  }
  void TearDown() override { (void)remove_tree(m_dir); }

  fs::path config(const std::string& json)
  {
    std::ofstream(m_dir / "config.json") << json;
    return m_dir / "config.json";
  }

  fs::path m_dir;
};

TEST_F(DockerCredentials, AuthsBase64UnderAnyServerSpelling)
{
  const auto file = config(R"({"auths": {"https://reg.example:5000/v1/": {"auth": ")" +
                           base64_encode("alice:pa:ss") + R"("}}})");
  const auto found = find_credentials(file, "reg.example:5000");
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_TRUE(*found);
  EXPECT_EQ((*found)->username, "alice");
  EXPECT_EQ((*found)->secret, "pa:ss");
  const auto other = find_credentials(file, "other.example");
  ASSERT_TRUE(other);
  EXPECT_FALSE(*other);
}

TEST_F(DockerCredentials, NoFileIsNoCredentials)
{
  const auto found = find_credentials(m_dir / "absent.json", "reg.example");
  ASSERT_TRUE(found);
  EXPECT_FALSE(*found);
}

TEST_F(DockerCredentials, MalformedFileNamesItself)
{
  const auto file = config(R"({"auths": {"reg.example": {"auth": "not base64!"}}})");
  const auto found = find_credentials(file, "reg.example");
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().category(), Errc::usage);
  EXPECT_NE(found.error().message().find("config.json"), std::string::npos);
}

TEST_F(DockerCredentials, HelperProgramAnswersOnStdout)
{
  // docker-credential-test_only: reads the server on stdin, answers JSON.
  const auto helper = m_dir / "docker-credential-test_only";
  std::ofstream(helper) << "#!/bin/sh\nread server\n[ \"$1\" = get ] || exit 3\n"
                           "printf '{\"ServerURL\":\"%s\",\"Username\":\"bob\",\"Secret\":\"s3cret\"}' \"$server\"\n";
  fs::permissions(helper, fs::perms::owner_all);
  const std::string path = m_dir.string() + ":" + std::getenv("PATH");
  ::setenv("PATH", path.c_str(), 1);
  const auto file = config(R"({"auths": {"reg.example": {"auth": ")" + base64_encode("ignored:x") +
                           R"("}}, "credHelpers": {"reg.example": "test_only"}})");
  const auto found = find_credentials(file, "reg.example");
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_TRUE(*found);
  EXPECT_EQ((*found)->username, "bob"); // credHelpers wins over auths
  EXPECT_EQ((*found)->secret, "s3cret");

  const auto missing = find_credentials(config(R"({"credsStore": "absent_helper"})"), "reg.example");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("docker-credential-absent_helper"), std::string::npos);
}

} // namespace
} // namespace prewarm::registry
