// SPDX-License-Identifier: Apache-2.0
// Without libFuzzer (gcc builds): feeds every file under the directories
// given as arguments to LLVMFuzzerTestOneInput once, so the seed corpus and
// every kept crash input run as a regression test in every CI.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int
main(int argc, char** argv)
{
  std::size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::filesystem::is_directory(argv[i])) {
      continue; // no crash inputs kept yet for this target
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(argv[i])) {
      if (!entry.is_regular_file()) {
        continue;
      }
      std::ifstream in(entry.path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), {});
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++inputs;
    }
  }
  std::printf("%zu inputs, no crash\n", inputs);
  return inputs > 0 ? 0 : 1;
}
