// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime env/exec enable the OpenCL layer only for programs the
// layer recorded, and only when the layer library is there.
#include "base/files.hpp"
#include "install/opencl_layer_environment.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

namespace prewarm::install {
namespace {

class OpenClLayerEnvironment : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = make_private_directory(std::filesystem::temp_directory_path(), "prewarm-layer-env.");
    ASSERT_TRUE(dir);
    m_dir = *dir;
    ::unsetenv("OPENCL_LAYERS");
  }
  void TearDown() override
  {
    (void)remove_tree(m_dir);
    ::unsetenv("PREWARM_OPENCL_LAYER");
    ::unsetenv("OPENCL_LAYERS");
  }
  void write_meta(const std::string& text)
  {
    std::filesystem::create_directories(m_dir / "programs" / "ab");
    ASSERT_TRUE(write_file_atomic(m_dir / "programs" / "ab" / "ab01.meta", text, 0644, Durability::none));
  }
  std::map<std::string, std::string> environment()
  {
    std::map<std::string, std::string> out;
    for (const auto& s : opencl_layer_environment(m_dir / "programs")) {
      out[s.name] = s.value;
    }
    return out;
  }
  std::filesystem::path m_dir;
};

TEST_F(OpenClLayerEnvironment, EngineRecordsNeedNoLayer)
{
  write_meta("format 1\nsource-sha256 aa\nvendor cpu\nbinary-sha256 bb\n");
  EXPECT_FALSE(holds_layer_records(m_dir / "programs"));
  EXPECT_TRUE(environment().empty());
}

TEST_F(OpenClLayerEnvironment, IntelAotTargetsNeedTheLayer)
{
  // A command's recorded programs compiled for an Intel target reach the
  // application only through the layer; a directory without a target
  // record (or an empty aot/) does not count.
  std::filesystem::create_directories(m_dir / "programs" / "aot" / "acm-g10");
  ASSERT_TRUE(write_file_atomic(m_dir / "programs" / "aot" / "acm-g10" / "0123.zebin", "z", 0644, Durability::none));
  EXPECT_FALSE(holds_layer_records(m_dir / "programs"));
  ASSERT_TRUE(write_file_atomic(m_dir / "programs" / "aot" / "acm-g10" / "target.arc-a770", "format 1\n", 0644,
                                Durability::none));
  EXPECT_TRUE(holds_layer_records(m_dir / "programs"));
}

TEST_F(OpenClLayerEnvironment, AnAbsentDirectoryNeedsNoLayer)
{
  EXPECT_FALSE(holds_layer_records(m_dir / "nothing"));
}

TEST_F(OpenClLayerEnvironment, LayerRecordsEnableTheLayerInServeMode)
{
  write_meta("format 1\nvendor cpu\nlayer-format 1\nstage build\nbinary-sha256 bb\n");
  const auto library = m_dir / "libprewarm_opencl_layer.so";
  ASSERT_TRUE(write_file_atomic(library, "elf", 0644, Durability::none));
  ::setenv("PREWARM_OPENCL_LAYER", library.c_str(), 1);
  ::setenv("OPENCL_LAYERS", "/other/layer.so", 1);
  const auto env = environment();
  EXPECT_EQ(env.at("PREWARM_LAYER"), "serve");
  EXPECT_EQ(env.at("OPENCL_LAYERS"), library.string() + ":/other/layer.so"); // ours first: ocl-icd 2.3.1 passes children only the first
}

TEST_F(OpenClLayerEnvironment, AMissingLibraryEnablesNothing)
{
  write_meta("format 1\nvendor cpu\nlayer-format 1\nbinary-sha256 bb\n");
  ::setenv("PREWARM_OPENCL_LAYER", (m_dir / "absent.so").c_str(), 1);
  EXPECT_TRUE(environment().empty());
}

} // namespace
} // namespace prewarm::install
