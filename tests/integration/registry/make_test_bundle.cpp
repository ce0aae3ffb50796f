// SPDX-License-Identifier: Apache-2.0
// A test tool: a signed bundle with one slice per given tree, each slice
// requiring one vendor, written with the builder's own writer.
//   make_test_bundle KEY OUT SERIAL ID:VENDOR:TREE...
// TREE holds <kind>/<files> (e.g. pocl/blob.bin). Used by the registry test
// and bench/run's registry case to make multi-target bundles without GPUs or ocloc.
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
  if (argc < 5) {
    std::fprintf(stderr, "usage: make_test_bundle KEY OUT SERIAL ID:VENDOR:TREE...\n");
    return 2;
  }
  auto key = pack::PrivateKey::load(argv[1]);
  if (!key) {
    std::fprintf(stderr, "make_test_bundle: %s\n", key.error().describe().c_str());
    return 1;
  }
  pack::BundleSpec spec;
  spec.channel = "registry-test";
  spec.serial = std::stoull(argv[3]);
  spec.issued_at = now_seconds() - std::chrono::hours(1);
  spec.expires = now_seconds() + std::chrono::hours(24);
  spec.build_manifest_sha256 = sha256_hex("registry-test");
  for (int i = 4; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto first = arg.find(':');
    const auto second = arg.find(':', first + 1);
    spec.slices.push_back({arg.substr(0, first),
                           arg.substr(second + 1),
                           {{"vendor", "==", arg.substr(first + 1, second - first - 1)}},
                           {"test tree " + arg.substr(0, first)}});
  }
  const auto written = pack::write_bundle(spec, std::span<const pack::PrivateKey>(&*key, 1), argv[2]);
  if (!written) {
    std::fprintf(stderr, "make_test_bundle: %s\n", written.error().describe().c_str());
    return 1;
  }
  return 0;
}
