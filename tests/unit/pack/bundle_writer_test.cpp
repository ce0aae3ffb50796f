// SPDX-License-Identifier: Apache-2.0
#include "bundle_test_support.hpp"

#include "base/files.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/signature.hpp"
#include "bundle/slice_reader.hpp"
#include "pack/bundle_writer.hpp"
#include "pack/inspect.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>

#include <filesystem>

namespace prewarm::pack {
namespace {

namespace fs = std::filesystem;

class BundleWriterTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto created = TempDir::create("prewarm-test-");
    ASSERT_TRUE(created);
    m_dir.emplace(std::move(*created));
    fs::create_directories(dir() / "cpu" / "pocl" / "ab");
    test::write_bytes(dir() / "cpu" / "pocl" / "ab" / "k.so", "cpu kernel");
    fs::create_directories(dir() / "cpu" / "programs");
    test::write_bytes(dir() / "cpu" / "programs" / "p.bin", "cpu program");
    fs::create_directories(dir() / "gpu" / "cuda");
    test::write_bytes(dir() / "gpu" / "cuda" / "index", "cuda index");
  }

  BundleSpec spec() const
  {
    BundleSpec s;
    s.channel = "test/unit";
    s.serial = 3;
    s.issued_at = test::test_time();
    s.expires = test::test_time(90);
    s.build_manifest_sha256 = sha256_hex("build.yaml");
    s.slices = {
      SliceInput{"cpu", dir() / "cpu", {{"vendor", "==", "cpu"}}, {"tiny fp32 bs=1"}},
      SliceInput{"h100", dir() / "gpu", {{"nvidia.sm", "==", "90"}, {"vendor", "==", "nvidia"}}, {"tiny fp16 bs=1"}},
    };
    return s;
  }

  std::vector<fs::path> leftovers() const
  {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir())) {
      if (e.path().filename().string().find(".tmp-") != std::string::npos) {
        out.push_back(e.path());
      }
    }
    return out;
  }

  const fs::path& dir() const { return m_dir->path(); }
  std::optional<TempDir> m_dir;
};

TEST_F(BundleWriterTest, WritesAVerifiableBundle)
{
  const std::vector<PrivateKey> keys{test::test_only_key()};
  const auto out = dir() / "bundle";
  const auto written = write_bundle(spec(), keys, out);
  ASSERT_TRUE(written) << written.error().message();
  EXPECT_TRUE(leftovers().empty());

  const auto loaded = bundle::load_bundle_files(out);
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_EQ(sha256_hex(loaded->manifest_bytes), written->manifest_sha256);
  ASSERT_TRUE(bundle::verify_manifest_signature(loaded->manifest_bytes, loaded->envelope_bytes,
                                                test::trust_of(test::test_only_key()), test::test_time(1)));
  const auto manifest = bundle::parse(loaded->manifest_bytes);
  ASSERT_TRUE(manifest) << manifest.error().message();
  EXPECT_EQ(*manifest, written->manifest);
  EXPECT_EQ(manifest->producer.substr(0, 8), "prewarm/");
  ASSERT_EQ(manifest->slices.size(), 2u);
  EXPECT_EQ(manifest->slices[1].requirements.front().key, "nvidia.sm"); // sorted

  auto staging = TempDir::create("prewarm-test-staging-");
  ASSERT_TRUE(staging);
  UniqueFd staging_fd(::open(staging->path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (const auto& slice : manifest->slices) {
    auto fd = bundle::open_slice_payload(out, slice.id);
    ASSERT_TRUE(fd) << fd.error().message();
    const auto s = bundle::extract_slice(fd->get(), slice, staging_fd.get());
    ASSERT_TRUE(s) << s.error().message();
  }
  EXPECT_EQ(*read_file((staging->path() / "pocl/ab/k.so").string()), "cpu kernel");
  EXPECT_EQ(*read_file((staging->path() / "cuda/index").string()), "cuda index");
}

TEST_F(BundleWriterTest, SameInputsSameBytes)
{
  const std::vector<PrivateKey> keys{test::test_only_key()};
  ASSERT_TRUE(write_bundle(spec(), keys, dir() / "a"));
  ASSERT_TRUE(write_bundle(spec(), keys, dir() / "b"));
  for (const auto& name : {"manifest", "manifest.sig", "slices/cpu.tar.zst", "slices/h100.tar.zst"}) {
    EXPECT_EQ(*read_file((dir() / "a" / name).string()), *read_file((dir() / "b" / name).string())) << name;
  }
}

TEST_F(BundleWriterTest, ReplacesABundleButNothingElse)
{
  const std::vector<PrivateKey> keys{test::test_only_key()};
  const auto out = dir() / "bundle";
  ASSERT_TRUE(write_bundle(spec(), keys, out));
  auto next = spec();
  next.serial = 4;
  const auto second = write_bundle(next, keys, out);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(second->manifest.serial, 4u);
  EXPECT_NE(read_file((out / "manifest").string())->find("serial 4\n"), std::string::npos);
  EXPECT_TRUE(leftovers().empty());

  fs::create_directories(dir() / "precious");
  test::write_bytes(dir() / "precious" / "data", "keep me");
  const auto refused = write_bundle(spec(), keys, dir() / "precious");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("not a prewarm bundle"), std::string::npos);
  EXPECT_EQ(*read_file((dir() / "precious" / "data").string()), "keep me");
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(BundleWriterTest, NoPartialBundleOnError)
{
  fs::create_symlink("/etc/passwd", dir() / "gpu" / "cuda" / "evil");
  const std::vector<PrivateKey> keys{test::test_only_key()};
  const auto r = write_bundle(spec(), keys, dir() / "bundle");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("symbolic link"), std::string::npos) << r.error().message();
  EXPECT_FALSE(fs::exists(dir() / "bundle"));
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(BundleWriterTest, RejectsBadSpec)
{
  const std::vector<PrivateKey> keys{test::test_only_key()};
  auto s = spec();
  s.slices[1].id = "cpu";
  EXPECT_FALSE(write_bundle(s, keys, dir() / "b1"));
  s = spec();
  s.slices[0].requirements.push_back({"gpu.cores", ">=", "1"});
  EXPECT_FALSE(write_bundle(s, keys, dir() / "b2"));
  s = spec();
  s.expires = s.issued_at;
  EXPECT_FALSE(write_bundle(s, keys, dir() / "b3"));
  EXPECT_FALSE(write_bundle(spec(), {}, dir() / "b4"));
  s = spec();
  s.slices[0].id = "CPU";
  EXPECT_FALSE(write_bundle(s, keys, dir() / "b5"));
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(BundleWriterTest, TwoSignersMeetThresholdTwo)
{
  const auto second = *PrivateKey::generate();
  const std::vector<PrivateKey> keys{test::test_only_key(), second};
  ASSERT_TRUE(write_bundle(spec(), keys, dir() / "bundle"));
  bundle::TrustStore trust = test::trust_of(test::test_only_key());
  trust.keys.push_back(bundle::TrustedKey{second.public_key(), {}, {}});
  trust.threshold = 2;
  const auto loaded = bundle::load_bundle_files(dir() / "bundle");
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(bundle::verify_manifest_signature(loaded->manifest_bytes, loaded->envelope_bytes, trust, test::test_time(1)));
}

TEST_F(BundleWriterTest, LoadCapsAndMissingFiles)
{
  EXPECT_FALSE(bundle::load_bundle_files(dir() / "nothing"));
  EXPECT_EQ(bundle::load_bundle_files(dir() / "nothing").error().code(), "E_IO");
  fs::create_directories(dir() / "huge");
  {
    std::string big(bundle::k_max_manifest_bytes + 1, 'a');
    test::write_bytes(dir() / "huge" / "manifest", big);
    test::write_bytes(dir() / "huge" / "manifest.sig", "x");
  }
  const auto loaded = bundle::load_bundle_files(dir() / "huge");
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code(), "E_LIMIT");
  EXPECT_FALSE(bundle::is_bundle_directory(dir() / "huge"));
}

TEST_F(BundleWriterTest, InspectTextAndJson)
{
  const std::vector<PrivateKey> keys{test::test_only_key()};
  ASSERT_TRUE(write_bundle(spec(), keys, dir() / "bundle"));
  const auto unchecked = inspect_bundle(dir() / "bundle", std::nullopt, test::test_time(1));
  ASSERT_TRUE(unchecked) << unchecked.error().message();
  const auto text = format_text(*unchecked);
  EXPECT_NE(text.find("signature not checked"), std::string::npos) << text;
  EXPECT_NE(text.find("requires nvidia.sm == 90"), std::string::npos) << text;
  EXPECT_NE(text.find("kind     pocl      1 file"), std::string::npos) << text;

  const auto checked = inspect_bundle(dir() / "bundle", test::trust_of(test::test_only_key()), test::test_time(1));
  ASSERT_TRUE(checked) << checked.error().message();
  EXPECT_NE(format_text(*checked).find("signature  verified"), std::string::npos);
  const auto json = nlohmann::json::parse(format_json(*checked));
  EXPECT_EQ(json["signature"], "verified");
  EXPECT_EQ(json["slices"].size(), 2u);
  EXPECT_EQ(json["slices"][0]["kinds"][0]["kind"], "pocl");
  EXPECT_EQ(json["slices"][0]["kinds"][0]["files"], 1);

  EXPECT_FALSE(json["slices"][0].contains("needs_install_environment")) << "no runtime env, nothing needed";

  // A runtime env line beyond the runtime's allow list: inspect says the
  // trust policy must name it (install.environment), before anyone installs.
  auto with_env = spec();
  with_env.slices[0].environment = {{"PYOPENCL_NO_CACHE", "1"}, {"TOOL_EXPECT", "yes"}};
  ASSERT_TRUE(write_bundle(with_env, keys, dir() / "with-env"));
  const auto needing = inspect_bundle(dir() / "with-env", std::nullopt, test::test_time(1));
  ASSERT_TRUE(needing) << needing.error().message();
  EXPECT_NE(format_text(*needing).find("needs install.environment: [TOOL_EXPECT]"), std::string::npos)
    << format_text(*needing);
  EXPECT_EQ(nlohmann::json::parse(format_json(*needing))["slices"][0]["needs_install_environment"],
            nlohmann::json::array({"TOOL_EXPECT"}))
    << "PYOPENCL_NO_CACHE is a vetted switch: only TOOL_EXPECT needs the policy";

  const auto other = *PrivateKey::generate();
  const auto wrong = inspect_bundle(dir() / "bundle", test::trust_of(other), test::test_time(1));
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), "E_SIG_UNTRUSTED_KEY");
}

} // namespace
} // namespace prewarm::pack
