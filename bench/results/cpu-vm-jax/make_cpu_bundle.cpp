// SPDX-License-Identifier: Apache-2.0
// Scratch tool (not part of the project): a signed bundle with one CPU slice
// holding custom/jax, with the requirements the builder records for JAX on
// the cpu target (custom_capture.cpp), written with the builder's own writer.
//   make_cpu_bundle PREFIX OUT STAGING SITE_PACKAGES ISA_LEVEL JAX_VERSION
#include "base/digest.hpp"
#include "base/time_format.hpp"
#include "pack/bundle_writer.hpp"
#include "pack/key_pair.hpp"

#include <cstdio>
#include <string>

int
main(int argc, char** argv)
{
  using namespace prewarm;
  if (argc != 7) {
    return 2;
  }
  auto files = pack::generate_key_pair(argv[1]);
  if (!files) {
    std::fprintf(stderr, "%s\n", files.error().describe().c_str());
    return 1;
  }
  auto key = pack::PrivateKey::load(files->private_key);
  if (!key) {
    return 1;
  }
  pack::BundleSpec spec;
  spec.serial = 1;
  spec.issued_at = now_seconds() - std::chrono::hours(1);
  spec.expires = now_seconds() + std::chrono::hours(24);
  spec.build_manifest_sha256 = sha256_hex("cpu-apps");
  pack::SliceInput slice{"cpu-jax",
                         argv[3],
                         {{"cpu.arch", "==", "x86_64"},
                          {"cpu.isa-level", ">=", argv[5]},
                          {"framework.jax", "==", argv[6]},
                          {"framework.jaxlib", "==", argv[6]}},
                         {"cpu/jax-mlp"}};
  slice.caches = {bundle::CustomCache{"jax", "JAX_COMPILATION_CACHE_DIR"}};
  slice.site_packages = {argv[4]};
  spec.slices.push_back(slice);
  const auto written = pack::write_bundle(spec, std::span<const pack::PrivateKey>(&*key, 1), argv[2]);
  if (!written) {
    std::fprintf(stderr, "%s\n", written.error().describe().c_str());
    return 1;
  }
  return 0;
}
