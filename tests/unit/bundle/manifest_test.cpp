// SPDX-License-Identifier: Apache-2.0
#include "bundle_test_support.hpp"

#include "bundle/bundle_manifest.hpp"

#include <gtest/gtest.h>

namespace prewarm::bundle {
namespace {

using test::file_entry;
using test::replace_once;

Slice
sample_slice(std::string id = "cpu-pocl")
{
  Slice s;
  s.id = std::move(id);
  s.payload_sha256 = std::string(64, 'a');
  s.payload_size = 1234;
  s.requirements = {{"vendor", "==", "cpu"}, {"opencl.driver", ">=", "3.1"}, {"pci-id", "in", "0x56a0,0x56a1"}};
  s.jobs = {"tiny-llama fp16 bs=1", "tiny-llama fp16 bs=4"};
  s.directories = {"pocl", "pocl/ab", "programs"};
  s.files = {file_entry("pocl/ab/kernel.so", "kernel"), file_entry("programs/p1.bin", "program", 0755)};
  s.uncompressed_size = 6 + 7;
  return s;
}

std::string
sample_bytes()
{
  return serialize(test::make_manifest({sample_slice("b-slice"), sample_slice("a-slice")}));
}

void
expect_format_error(std::string_view bytes, std::string_view code = "E_MANIFEST_FORMAT")
{
  const auto parsed = parse(bytes);
  ASSERT_FALSE(parsed) << "accepted:\n" << bytes;
  EXPECT_EQ(parsed.error().category(), Errc::verify);
  EXPECT_EQ(parsed.error().code(), code) << parsed.error().message();
}

TEST(BundleManifest, RoundTripIsByteExact)
{
  const auto bytes = sample_bytes();
  const auto parsed = parse(bytes);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(serialize(*parsed), bytes);
  ASSERT_EQ(parsed->slices.size(), 2u);
  EXPECT_EQ(parsed->slices[0].id, "a-slice"); // normalize sorted them
  EXPECT_EQ(parsed->slices[0].entry_count, 5u);
  EXPECT_EQ(parsed->slices[0].files[1].mode, 0755u);
  EXPECT_EQ(parsed->channel, "test/unit");
  EXPECT_EQ(parsed->issued_at, test::test_time());
  EXPECT_NE(bytes.find("file " + sha256_hex("program") + " 7 0755 programs/p1.bin\n"), std::string::npos);
  EXPECT_NE(bytes.find("require pci-id in 0x56a0,0x56a1\n"), std::string::npos);
}

TEST(BundleManifest, RejectsCrlf)
{
  auto bytes = sample_bytes();
  bytes = replace_once(bytes, "serial 7\n", "serial 7\r\n");
  expect_format_error(bytes);
  EXPECT_NE(parse(bytes).error().message().find("manifest:3"), std::string::npos) << parse(bytes).error().message();
}

TEST(BundleManifest, RejectsTrailingSpace)
{
  expect_format_error(replace_once(sample_bytes(), "serial 7\n", "serial 7 \n"));
}

TEST(BundleManifest, RejectsDoubleSpaceAndTab)
{
  expect_format_error(replace_once(sample_bytes(), "job tiny-llama fp16 bs=1", "job tiny-llama  fp16 bs=1"));
  expect_format_error(replace_once(sample_bytes(), "job tiny-llama fp16 bs=1", "job tiny-llama\tfp16 bs=1"));
}

TEST(BundleManifest, RejectsNonAscii)
{
  expect_format_error(replace_once(sample_bytes(), "bs=1", "bs=\xc3\xa9"));
}

TEST(BundleManifest, RejectsUnknownLine)
{
  expect_format_error(replace_once(sample_bytes(), "job tiny-llama fp16 bs=1\n", "job tiny-llama fp16 bs=1\nnote hello\n"));
  expect_format_error(replace_once(sample_bytes(), "serial 7\n", "serial 7\nsigner me\n"));
}

TEST(BundleManifest, RejectsReorderedLines)
{
  // Header keys swapped.
  expect_format_error(replace_once(sample_bytes(), "channel test/unit\nserial 7\n", "serial 7\nchannel test/unit\n"));
  // Sections out of order within a slice (dir before job).
  const auto slice = sample_slice("a");
  const auto bytes = serialize(test::make_manifest({slice}));
  expect_format_error(replace_once(bytes, "job tiny-llama fp16 bs=4\ndir pocl\n", "dir pocl\njob tiny-llama fp16 bs=4\n"));
  // Lines of one section unsorted.
  expect_format_error(replace_once(bytes, "dir pocl\ndir pocl/ab\n", "dir pocl/ab\ndir pocl\n"));
}

TEST(BundleManifest, RejectsDuplicates)
{
  expect_format_error(replace_once(sample_bytes(), "job tiny-llama fp16 bs=1\n", "job tiny-llama fp16 bs=1\njob tiny-llama fp16 bs=1\n"));
  expect_format_error(replace_once(sample_bytes(), "serial 7\n", "serial 7\nserial 7\n"));
  auto twice = test::make_manifest({sample_slice("a")});
  twice.slices.push_back(sample_slice("a"));
  expect_format_error(serialize(twice));
}

TEST(BundleManifest, RejectsBadAndUppercaseHex)
{
  const std::string digest(64, 'a');
  expect_format_error(replace_once(sample_bytes(), "payload " + digest, "payload " + std::string(64, 'A')));
  expect_format_error(replace_once(sample_bytes(), "payload " + digest, "payload " + std::string(63, 'a') + "g"));
  expect_format_error(replace_once(sample_bytes(), "payload " + digest, "payload " + std::string(62, 'a')));
  const auto file_digest = sha256_hex("kernel");
  std::string upper = file_digest;
  for (char& c : upper) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  expect_format_error(replace_once(sample_bytes(), file_digest, upper));
}

TEST(BundleManifest, RejectsNonCanonicalNumbers)
{
  expect_format_error(replace_once(sample_bytes(), "serial 7\n", "serial 07\n"));
  expect_format_error(replace_once(sample_bytes(), "serial 7\n", "serial +7\n"));
  expect_format_error(replace_once(sample_bytes(), "serial 7\n", "serial 18446744073709551616\n"));
}

TEST(BundleManifest, RejectsTruncation)
{
  const auto bytes = sample_bytes();
  expect_format_error(bytes.substr(0, bytes.size() - 1));               // last LF gone
  expect_format_error(bytes.substr(0, bytes.find("slice ")));           // no slices
  expect_format_error(bytes.substr(0, bytes.rfind("file ")));           // a file line gone: counts differ
  expect_format_error("");
}

TEST(BundleManifest, RejectsUnknownRequirementKeyWithItsOwnCode)
{
  expect_format_error(replace_once(sample_bytes(), "require vendor == cpu", "require gpu.cores >= 100"), "E_UNKNOWN_REQUIREMENT");
}

TEST(BundleManifest, RejectsBadRequirementValues)
{
  expect_format_error(replace_once(sample_bytes(), "require opencl.driver >= 3.1", "require opencl.driver >= three"));
  expect_format_error(replace_once(sample_bytes(), "require vendor == cpu", "require vendor ~= cpu"));
  expect_format_error(replace_once(sample_bytes(), "require pci-id in 0x56a0,0x56a1", "require pci-id in 0x56a0,,0x56a1"));
}

TEST(BundleManifest, RejectsBadPaths)
{
  for (const std::string bad : {"pocl/ab/../x", "pocl/./x", "pocl//x", "/pocl/x", "pocl/x/", "unknown/x", "pocl/a\x01b",
                                "pocl/caf\xc3", "pocl/\xff", "pocl/a\x7f", "pocl/\xc2\x85", "pocl/\xed\xa0\x80"}) {
    auto slice = sample_slice("a");
    slice.files.push_back(file_entry(bad, "x"));
    slice.uncompressed_size += 1;
    auto m = test::make_manifest({slice});
    const auto s = validate(m);
    EXPECT_FALSE(s) << bad;
    expect_format_error(serialize(m));
  }
}

TEST(BundleManifest, RejectsCaseFoldCollision)
{
  auto slice = sample_slice("a");
  slice.directories.push_back("pocl/AB");
  auto m = test::make_manifest({slice});
  const auto s = validate(m);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("case-fold"), std::string::npos) << s.error().message();
}

TEST(BundleManifest, RequiresParentDirectories)
{
  auto slice = sample_slice("a");
  slice.directories = {"pocl", "programs"}; // pocl/ab missing
  auto m = test::make_manifest({slice});
  const auto s = validate(m);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("no dir line for its parent"), std::string::npos) << s.error().message();
}

TEST(BundleManifest, RejectsDepthAndLength)
{
  std::string deep = "pocl";
  std::vector<std::string> dirs{"pocl"};
  for (int i = 0; i < 33; ++i) {
    deep += "/d";
    dirs.push_back(deep);
  }
  auto slice = sample_slice("a");
  slice.directories.insert(slice.directories.end(), dirs.begin() + 1, dirs.end());
  auto m = test::make_manifest({slice});
  ASSERT_FALSE(validate(m));
  EXPECT_EQ(validate(m).error().code(), "E_PATH");
  EXPECT_FALSE(validate_entry_path("pocl/" + std::string(256, 'a'), KindOnlyPath::refused));
  EXPECT_TRUE(validate_entry_path("pocl/" + std::string(255, 'a'), KindOnlyPath::refused));
  EXPECT_FALSE(validate_entry_path("pocl/" + std::string(250, 'a') + "/" + std::string(250, 'b') + "/" +
                                     std::string(250, 'c') + "/" + std::string(250, 'd') + "/" + std::string(250, 'e') + "/f",
                                   KindOnlyPath::refused));
}

TEST(BundleManifest, RejectsExpiryNotAfterIssue)
{
  auto m = test::make_manifest({sample_slice("a")});
  m.expires = m.issued_at;
  expect_format_error(serialize(m));
}

TEST(BundleManifest, RejectsWrongCounts)
{
  auto m = test::make_manifest({sample_slice("a")});
  m.slices[0].entry_count += 1;
  expect_format_error(serialize(m));
  m = test::make_manifest({sample_slice("a")});
  m.slices[0].uncompressed_size += 1;
  expect_format_error(serialize(m));
}

TEST(BundleManifest, RejectsBadModeAndChannel)
{
  expect_format_error(replace_once(sample_bytes(), " 0755 programs/p1.bin", " 4755 programs/p1.bin"));
  expect_format_error(replace_once(sample_bytes(), "channel test/unit", "channel -test"));
}

// Names as applications make them: clFFT's device directory, darktable's
// links, parentheses and letters beyond ASCII.
Slice
slice_with_names_and_links()
{
  Slice s = sample_slice("names");
  s.directories.push_back("pocl/pthread-skylake-avx512-AMD EPYC");
  s.files.push_back(file_entry("pocl/pthread-skylake-avx512-AMD EPYC/fft (1).bin", "fft"));
  s.files.push_back(file_entry("pocl/ab/caf\xc3\xa9 \xe6\xbc\xa2.bin", "utf"));
  s.links = {LinkEntry{"pocl/ab/blur.cl.bin", "kernel.so"},
             LinkEntry{"pocl/ab/up", "../pthread-skylake-avx512-AMD EPYC/fft (1).bin"}};
  s.uncompressed_size += 6;
  return s;
}

TEST(BundleManifest, NamesAndLinksRoundTripPercentEncoded)
{
  auto m = test::make_manifest({slice_with_names_and_links()});
  ASSERT_TRUE(validate(m)) << validate(m).error().message();
  const auto bytes = serialize(m);
  EXPECT_NE(bytes.find("dir pocl/pthread-skylake-avx512-AMD%20EPYC\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find(" 0644 pocl/pthread-skylake-avx512-AMD%20EPYC/fft%20%281%29.bin\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find(" pocl/ab/caf%C3%A9%20%E6%BC%A2.bin\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("link pocl/ab/blur.cl.bin kernel.so\nlink pocl/ab/up ../pthread-skylake-avx512-AMD%20EPYC/fft%20%281%29.bin\n"),
            std::string::npos) << bytes;
  const auto parsed = parse(bytes);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->slices[0], m.slices[0]);
  EXPECT_EQ(parsed->slices[0].entry_count, 10u);
  EXPECT_EQ(serialize(*parsed), bytes);
  // A manifest without such names is the bytes it always was.
  EXPECT_EQ(sample_bytes().find('%'), std::string::npos);
}

// The application's site-packages the build found the frameworks in: after
// the requirements, sorted, percent-encoded, absolute only.
TEST(BundleManifest, SitePackagesRoundTripAndRefuseWhatIsNotAnAbsoluteDirectory)
{
  auto slice = sample_slice();
  slice.site_packages = {"/opt/conda/lib/python3.11/site-packages", "/app/my venv/lib/python3.11/site-packages"};
  auto m = test::make_manifest({slice});
  ASSERT_TRUE(validate(m)) << validate(m).error().message();
  const auto bytes = serialize(m);
  EXPECT_NE(bytes.find("require vendor == cpu\nsite-packages /app/my%20venv/lib/python3.11/site-packages\n"
                       "site-packages /opt/conda/lib/python3.11/site-packages\njob "),
            std::string::npos)
    << bytes;
  const auto parsed = parse(bytes);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->slices[0].site_packages,
            (std::vector<std::string>{"/app/my venv/lib/python3.11/site-packages", "/opt/conda/lib/python3.11/site-packages"}));
  EXPECT_EQ(serialize(*parsed), bytes);
  // Without one, the bytes are what they always were.
  EXPECT_EQ(sample_bytes().find("site-packages"), std::string::npos);
  for (const auto* bad : {"relative/site-packages", "/a/../site-packages", "/a/./b", "/a//b", "/a/b/", "/"}) {
    expect_format_error(replace_once(bytes, "/opt/conda/lib/python3.11/site-packages", bad));
  }
  expect_format_error(replace_once(bytes, "/opt/conda/", "/aaa/conda/"));
  expect_format_error(replace_once(replace_once(bytes, "site-packages /opt/conda/lib/python3.11/site-packages\n", ""),
                                   "dir pocl\n", "site-packages /opt/conda/lib/python3.11/site-packages\ndir pocl\n"));
}

TEST(BundleManifest, PercentEncodingHasOneSpelling)
{
  for (const std::string name : {"a b", "(x)", "%", "caf\xc3\xa9", "x+y-z_1.2", "\xff\x01"}) {
    const auto encoded = encode_entry_path(name);
    EXPECT_EQ(encoded.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-/%"),
              std::string::npos) << encoded;
    EXPECT_EQ(decode_entry_path(encoded), name) << encoded;
  }
  EXPECT_EQ(encode_entry_path("a b/%"), "a%20b/%25");
  for (const std::string bad : {"%2a", "%41", "%2F", "%2", "%", "a b", "%GG", "caf\xc3\xa9"}) {
    EXPECT_FALSE(decode_entry_path(bad)) << bad;
  }
  // A second spelling on a manifest line is refused, not read as the same name.
  const auto bytes = serialize(test::make_manifest({slice_with_names_and_links()}));
  expect_format_error(replace_once(bytes, "AMD%20EPYC\n", "AMD%20%45PYC\n"));
  expect_format_error(replace_once(bytes, "link pocl/ab/blur.cl.bin kernel.so", "link pocl/ab/blur.cl.bin kernel%2Eso"));
}

TEST(BundleManifest, RefusesLinksThatLeaveTheirCacheOrLeadNowhere)
{
  const auto refused = [](LinkEntry link, std::string_view why) {
    auto slice = slice_with_names_and_links();
    slice.links.push_back(std::move(link));
    std::sort(slice.links.begin(), slice.links.end());
    auto m = test::make_manifest({slice});
    const auto s = validate(m);
    ASSERT_FALSE(s) << why;
    EXPECT_EQ(s.error().code(), "E_PATH") << s.error().message();
    EXPECT_NE(s.error().message().find(why), std::string::npos) << s.error().message();
    const auto parsed = parse(serialize(m));
    ASSERT_FALSE(parsed) << why;
    EXPECT_EQ(parsed.error().category(), Errc::verify);
  };
  refused({"pocl/ab/abs", "/etc/passwd"}, "absolute target");
  refused({"pocl/ab/esc", "../../programs/p1.bin"}, "climbs out of its cache");
  refused({"pocl/ab/esc2", "../../../x"}, "climbs out of");
  refused({"pocl/ab/dir", "../ab"}, "not a file line of this slice");
  refused({"pocl/ab/chain", "blur.cl.bin"}, "not a file line of this slice");
  refused({"pocl/ab/none", "missing.bin"}, "not a file line of this slice");
  refused({"pocl/ab/dot", "./kernel.so"}, "component");
  refused({"pocl/ab/mid", "x/../kernel.so"}, "after a name");
  refused({"pocl/ab/empty", ""}, "empty target");
  // A link's name collides like any entry's.
  auto slice = slice_with_names_and_links();
  slice.links.insert(slice.links.begin(), LinkEntry{"pocl/ab/KERNEL.so", "kernel.so"});
  const auto s = validate(test::make_manifest({slice}));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("case-fold"), std::string::npos) << s.error().message();
}

TEST(BundleManifest, ResolvesLinkTargetsWithinTheirTree)
{
  EXPECT_EQ(resolve_link_target("pocl/a/link", "b"), "pocl/a/b");
  EXPECT_EQ(resolve_link_target("pocl/a/link", "../b/x"), "pocl/b/x");
  EXPECT_EQ(resolve_link_target("custom/clfft/d e/l", "../k (1).bin"), "custom/clfft/k (1).bin");
  EXPECT_EQ(tree_of("custom/clfft/x/y"), "custom/clfft");
  EXPECT_EQ(tree_of("pocl/x/y"), "pocl");
  for (const auto& [link, target] : std::vector<std::pair<std::string, std::string>>{
         {"pocl/link", "../x"}, {"pocl/a/link", "../../x"}, {"custom/clfft/l", "../other/x"}, {"pocl/a/link", "/pocl/a/b"},
         {"pocl/a/link", ""}, {"pocl/a/link", "./b"}, {"pocl/a/link", "b/"}, {"pocl/a/link", "b//c"},
         {"pocl/a/link", "b/../c"}, {"pocl/a/link", ".."}, {"pocl/a/link", "b\x01"}}) {
    const auto resolved = resolve_link_target(link, target);
    ASSERT_FALSE(resolved) << link << " -> " << target;
    EXPECT_EQ(resolved.error().code(), "E_PATH");
  }
}

TEST(BundleManifest, KindOf)
{
  EXPECT_EQ(kind_of("pocl/ab/cd"), "pocl");
  EXPECT_EQ(kind_of("neo"), "neo");
}

} // namespace
} // namespace prewarm::bundle

namespace prewarm::bundle {
namespace {

// Single-byte mutations of a valid manifest: each is either rejected with a
// named code or (if the byte did not change) accepted as the same manifest.
TEST(BundleManifest, MutationsNeverSlipThrough)
{
  const auto bytes = sample_bytes();
  std::uint64_t state = 12345;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int i = 0; i < 3000; ++i) {
    auto mutated = bytes;
    const auto at = next() % mutated.size();
    mutated[at] = static_cast<char>(next() & 0xff);
    const auto parsed = parse(mutated);
    if (mutated == bytes) {
      EXPECT_TRUE(parsed);
      continue;
    }
    if (parsed) {
      // A mutation may still be a well-formed manifest (a digit or hex digit
      // changed); it must then be canonical, i.e. a different signed statement.
      EXPECT_EQ(serialize(*parsed), mutated);
    } else {
      EXPECT_FALSE(parsed.error().code().empty()) << parsed.error().message();
      EXPECT_EQ(parsed.error().category(), Errc::verify);
    }
  }
}

} // namespace
} // namespace prewarm::bundle
