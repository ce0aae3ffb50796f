// SPDX-License-Identifier: Apache-2.0
#include "base/encoding.hpp"

#include <gtest/gtest.h>

#include <random>

namespace prewarm {
namespace {

TEST(Hex, RoundTripsEveryByte)
{
  std::string all;
  for (int i = 0; i < 256; ++i) {
    all.push_back(static_cast<char>(i));
  }
  const auto hex = to_hex(all);
  EXPECT_EQ(hex.size(), 512u);
  EXPECT_EQ(hex.substr(0, 6), "000102");
  EXPECT_EQ(from_hex(hex), all);
}

TEST(Hex, RejectsUppercaseOddLengthAndNonHex)
{
  EXPECT_FALSE(from_hex("AB").has_value()); // one spelling per value
  EXPECT_FALSE(from_hex("abc").has_value());
  EXPECT_FALSE(from_hex("zz").has_value());
  EXPECT_TRUE(is_lower_hex(std::string(64, 'a'), 64));
  EXPECT_FALSE(is_lower_hex(std::string(63, 'a'), 64));
  EXPECT_FALSE(is_lower_hex(std::string(64, 'A'), 64));
}

TEST(Base64, MatchesRfc4648Vectors)
{
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_decode("Zm9vYmE="), "fooba");
}

TEST(Base64, RoundTripsRandomBytes)
{
  std::mt19937 rng(std::random_device{}());
  for (int n = 0; n < 70; ++n) {
    std::string bytes;
    for (int i = 0; i < n; ++i) {
      bytes.push_back(static_cast<char>(rng() & 0xff));
    }
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << "length " << n;
  }
}

TEST(Base64, RejectsNonCanonicalSpellings)
{
  EXPECT_FALSE(base64_decode("Zg=").has_value());    // bad length
  EXPECT_FALSE(base64_decode("Zh==").has_value());   // non-zero unused bits
  EXPECT_FALSE(base64_decode("Zm9=").has_value());   // non-zero unused bits
  EXPECT_FALSE(base64_decode("Zg==Zg==").has_value()); // padding in the middle
  EXPECT_FALSE(base64_decode("Zm 9").has_value());   // whitespace
  EXPECT_FALSE(base64_decode("Z===").has_value());   // too much padding
}

TEST(Trim, DropsBlankAtBothEndsOnly)
{
  EXPECT_EQ(trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(trim(" \n\t "), "");
  EXPECT_EQ(trim("x"), "x");
  EXPECT_EQ(trim(std::string_view("\0v1\0", 4), std::string_view(" \0", 2)), "v1");
}

TEST(InQuotes, EscapesControlBytesSoANameCannotForgeALogLine)
{
  EXPECT_EQ(in_quotes("pocl/aa/k.bin"), "\"pocl/aa/k.bin\"");
  EXPECT_EQ(in_quotes("a\nprewarm: installed\r\t\x1b[2K\x7f"), "\"a\\nprewarm: installed\\r\\t\\x1b[2K\\x7f\"");
  EXPECT_EQ(in_quotes(std::string_view("a\0b", 3)), "\"a\\x00b\"");
  EXPECT_EQ(in_quotes("caf\xc3\xa9"), "\"caf\xc3\xa9\"") << "UTF-8 stays as it is";
}

TEST(PrintableUtf8, AcceptsWhatApplicationsNameTheirEntries)
{
  for (const std::string good : {"pthread-skylake-avx512-AMD EPYC", "fft (1).bin", "caf\xc3\xa9", "\xe6\xbc\xa2",
                                 "\xf0\x9f\x98\x80", "~!@#$%^&*()[]{};:'\",<>?\\|`=", ""}) {
    EXPECT_TRUE(is_printable_utf8(good)) << in_quotes(good);
  }
  for (const std::string bad : {"a\x01", "a\x7f", "\n", "\xc3", "\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
                                "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80", "\xc2\x85", "\xff"}) {
    EXPECT_FALSE(is_printable_utf8(bad)) << in_quotes(bad);
  }
}

} // namespace
} // namespace prewarm
