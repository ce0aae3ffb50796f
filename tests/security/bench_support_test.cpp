// SPDX-License-Identifier: Apache-2.0
// Not a test: bench/install/run_bench.sh uses this binary to write its large
// signed bundle with the builder's real writer (skipped unless
// PREWARM_BENCH_TREE is set, so ctest never runs it for real).
//   PREWARM_BENCH_TREE      staging tree of the matching slice ("cpu", vendor == cpu)
//   PREWARM_BENCH_GPU_TREE  staging tree of a slice no CPU host matches (vendor == nvidia)
//   PREWARM_BENCH_OUT       bundle directory to write; OUT.pub gets the test_only key
#include "base/digest.hpp"
#include "pack/bundle_writer.hpp"
#include "pack/key_pair.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace prewarm;

TEST(BenchSupport, WriteBundleFromTree)
{
  const char* tree = std::getenv("PREWARM_BENCH_TREE");
  const char* gpu_tree = std::getenv("PREWARM_BENCH_GPU_TREE");
  const char* out = std::getenv("PREWARM_BENCH_OUT");
  if (!tree || !out) {
    GTEST_SKIP() << "PREWARM_BENCH_TREE / PREWARM_BENCH_OUT not set (bench/install/run_bench.sh sets them)";
  }
  const auto key = pack::PrivateKey::generate();
  ASSERT_TRUE(key);
  std::ofstream(std::string(out) + ".pub") << key->public_key().to_pem();
  pack::BundleSpec spec;
  spec.channel = "bench";
  spec.serial = 1;
  spec.issued_at = now_seconds() - std::chrono::hours(1);
  spec.expires = now_seconds() + std::chrono::hours(24);
  spec.build_manifest_sha256 = sha256_hex("bench");
  spec.slices.push_back({"cpu", tree, {{"vendor", "==", "cpu"}}, {"bench tree"}});
  if (gpu_tree) {
    spec.slices.push_back({"gpu", gpu_tree, {{"vendor", "==", "nvidia"}}, {"bench gpu tree"}});
  }
  const auto written = pack::write_bundle(spec, std::span<const pack::PrivateKey>(&*key, 1), out);
  ASSERT_TRUE(written) << written.error().message();
}
