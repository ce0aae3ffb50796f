// SPDX-License-Identifier: Apache-2.0
// The include part of a program's key (store/program_includes.hpp): every
// component that decides which header bytes the compiler reads changes the
// digest, and whatever cannot be known passes the program through.
#include "base/files.hpp"
#include "store/program_includes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include <sys/stat.h>
#include <unistd.h>

namespace prewarm::store {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

TEST(ScanIncludeDirectives, FindsEverySpelling)
{
  const auto scanned = scan_include_directives("#include \"a.h\"\n"
                                               "  #  include <b.h>\n"
                                               "#/* comment */include \"c.h\"\n"
                                               "%:include \"d.h\"\n"
                                               "#inc\\\nlude \"e.h\"\n"
                                               "#include_next <f.h>\n"
                                               "#if __has_include(\"g.h\") && __has_include( <h.h> )\n"
                                               "#import \"i.h\"\n"
                                               "#endif\n"
                                               "#if 0\n#include \"dead.h\"\n#endif\n");
  EXPECT_EQ(scanned.unsure, "");
  EXPECT_EQ(scanned.names, (Names{"a.h", "b.h", "c.h", "d.h", "e.h", "f.h", "g.h", "h.h", "i.h", "dead.h"}));
}

TEST(ScanIncludeDirectives, PlainCodeHasNone)
{
  const auto scanned = scan_include_directives("// #include is mentioned in a comment without a name\n"
                                               "__kernel void k(__global int* p) { printf(\"#\\n\"); p[0] = 1; }\n"
                                               "#define CAT(a, b) a##b\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
  EXPECT_EQ(scanned.unsure, "");
  EXPECT_TRUE(scanned.names.empty());
}

TEST(ScanIncludeDirectives, CommentsAndLiteralsAreReadAsTheCompilerReadsThem)
{
  // A commented-out include is no include; one after a comment is.
  EXPECT_EQ(scan_include_directives("// #include \"old.h\"\n/* #include OLD */ #include \"new.h\"\n").names, (Names{"new.h"}));
  // A `/*` inside a literal starts no comment: the include after it counts.
  EXPECT_EQ(scan_include_directives("char* s = \"/*\"; char c = '\\'';\n#include \"a.h\"\n// */\n").names, (Names{"a.h"}));
  // Text whose literals may not lex as C's keeps its comments: more names, never fewer.
  EXPECT_EQ(scan_include_directives("int a = 1'000; char* s = \"x'/*\";\n#include \"a.h\"\n// */\n").names, (Names{"a.h"}));
  EXPECT_EQ(scan_include_directives("#include <a/*b.h>\n#include \"c.h\"\n// */\n").names, (Names{"a/*b.h", "c.h"}));
  EXPECT_EQ(scan_include_directives("auto s = R\"(/*)\";\n#include \"a.h\"\n// */\n").names, (Names{"a.h"}));
}

TEST(ScanIncludeDirectives, ComputedIncludesAndDefinitionsAreKeptForExpansion)
{
  const auto scanned = scan_include_directives("#define H \"a.h\"\n#define F(x) #x\n#undef G\n#include H\n#include F(b.h) // c\n");
  EXPECT_EQ(scanned.unsure, "");
  EXPECT_TRUE(scanned.names.empty());
  EXPECT_EQ(scanned.computed, (Names{"H", "F(b.h)  "}));
  ASSERT_EQ(scanned.definitions.size(), 3u);
  EXPECT_EQ(scanned.definitions[1].name, "F");
  EXPECT_TRUE(scanned.definitions[1].function_like);
  EXPECT_EQ(scanned.definitions[1].params, (Names{"x"}));
  EXPECT_TRUE(scanned.definitions[2].undef);
}

TEST(ScanIncludeDirectives, WhatCannotBeReadIsUnsure)
{
  EXPECT_NE(scan_include_directives("#include\n").unsure, "");
  EXPECT_NE(scan_include_directives("#if __has_include(H)\n#endif\n").unsure, "");
  EXPECT_NE(scan_include_directives("#embed HEADER\n").unsure, "");
  EXPECT_NE(scan_include_directives("?\?=include \"a.h\"\n").unsure, "") << "a trigraph";
  EXPECT_NE(scan_include_directives("#\\u0069nclude \"a.h\"\n").unsure, "") << "a universal character name";
  EXPECT_NE(scan_include_directives("int a = 1'000;\n#include H\n").unsure, "") << "computed, read with its comments";
}

TEST(ExpandIncludeOperand, HashcatsIncludePath)
{
  // hashcat's build options and its kernels' includes.
  const auto options = parse_include_options(
    "-D KERNEL_STATIC -D INCLUDE_PATH=/usr/share/hashcat/OpenCL -D XM2S(x)=#x -D M2S(x)=XM2S(x) -I OpenCL");
  ASSERT_EQ(options.unsure, "");
  const auto expanded = expand_include_operand("M2S(INCLUDE_PATH/inc_vendor.h)", options.macros, {});
  EXPECT_EQ(expanded.unsure, "");
  EXPECT_EQ(expanded.names, (Names{"/usr/share/hashcat/OpenCL/inc_vendor.h"}));
  // #define COMPARE_S M2S(INCLUDE_PATH/inc_comp_single.cl), then #include COMPARE_S
  const auto text = scan_include_directives("#define COMPARE_S M2S(INCLUDE_PATH/inc_comp_single.cl)\n");
  const auto compare = expand_include_operand("COMPARE_S", options.macros, text.definitions);
  EXPECT_EQ(compare.unsure, "");
  EXPECT_EQ(compare.names, (Names{"/usr/share/hashcat/OpenCL/inc_comp_single.cl"}));
}

TEST(ExpandIncludeOperand, EveryDefinitionIsTried)
{
  const auto text = scan_include_directives("#ifdef A\n#define H \"a.h\"\n#else\n#define H <b.h>\n#endif\n");
  auto names = expand_include_operand("H", {}, text.definitions).names;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (Names{"a.h", "b.h"}));
  // Options and texts together; the text's may not be in force yet.
  const auto options = parse_include_options("-DH=\"c.h\"");
  names = expand_include_operand("H", options.macros, text.definitions).names;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (Names{"a.h", "b.h", "c.h"}));
}

TEST(ExpandIncludeOperand, WhatCannotBeExpandedWithCertaintyIsUnsure)
{
  const auto text = scan_include_directives("#define CAT(a, b) a ## b\n#define V(...) #__VA_ARGS__\n#define S(x) #x\n"
                                            "#define P(x) S(x)\n");
  EXPECT_NE(expand_include_operand("CAT(VALUE, _H)", {}, text.definitions).unsure, "") << "token pasting";
  EXPECT_NE(expand_include_operand("V(a.h)", {}, text.definitions).unsure, "") << "variadic";
  EXPECT_NE(expand_include_operand("P(__FILE__)", {}, text.definitions).unsure, "") << "predefined";
  EXPECT_NE(expand_include_operand("P(/usr/include/linux/x.h)", {}, text.definitions).unsure, "") << "linux is predefined";
  EXPECT_NE(expand_include_operand("P(cl_khr_fp64.h)", {}, text.definitions).unsure, "") << "an extension macro";
  EXPECT_NE(expand_include_operand("NOT_DEFINED", {}, text.definitions).unsure, "") << "may be predefined";
  const auto none = expand_include_operand("not_defined", {}, text.definitions);
  EXPECT_EQ(none.unsure, "") << "no header name: a compile error where live, nothing where dead";
  EXPECT_TRUE(none.names.empty());
  EXPECT_EQ(expand_include_operand("S(linux/x.h)", {}, text.definitions).names, (Names{"linux/x.h"}))
    << "a stringified argument is not expanded";
}

TEST(ParseIncludeOptions, EveryDirectorySpelling)
{
  const auto parsed = parse_include_options("-cl-mad-enable -I one -Itwo -I\"three\" -I \"four five\" -isystem six "
                                            "-iquote seven -idirafter eight -DX=1");
  EXPECT_EQ(parsed.unsure, "");
  // Shell splitting first, then blank splitting (quotes kept).
  EXPECT_EQ(parsed.dirs, (Names{"one", "two", "three", "four five", "six", "seven", "eight", "\"three\"", "\"four"}));
  EXPECT_TRUE(parsed.forced.empty());
}

TEST(ParseIncludeOptions, ForcedIncludes)
{
  const auto parsed = parse_include_options("-include pre.h -imacros macros.h -includejoined.h");
  EXPECT_EQ(parsed.unsure, "");
  EXPECT_EQ(parsed.forced, (Names{"pre.h", "macros.h", "joined.h"}));
}

TEST(ParseIncludeOptions, WhatMovesTheSearchIsUnsure)
{
  for (const char* options : {"@options.rsp", "-iprefix /x", "-isysroot /x", "--sysroot=/x", "-Xclang -I/x", "-I-",
                              "-fmodules", "-I \"open", "--include-directory=/x"}) {
    EXPECT_NE(parse_include_options(options).unsure, "") << options;
  }
  EXPECT_EQ(parse_include_options("-cl-fast-relaxed-math -w -Werror -cl-std=CL2.0 -DTILE=16").unsure, "");
}

class DigestIncludes : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = TempDir::create("test_only_program_includes-");
    ASSERT_TRUE(dir);
    m_dir.emplace(std::move(*dir));
  }
  fs::path dir(const std::string& name) const
  {
    const auto path = m_dir->path() / name;
    fs::create_directories(path);
    return path;
  }
  static void write(const fs::path& path, std::string_view text)
  {
    ASSERT_TRUE(write_file_atomic(path, text, 0644, Durability::none));
  }
  static IncludeDigest digest(std::string_view source, const std::string& options, const IncludeSearch& search = {})
  {
    return digest_includes(source, options, search);
  }

private:
  std::optional<TempDir> m_dir;
};

TEST_F(DigestIncludes, NoIncludesNoField)
{
  const auto d = digest("__kernel void k() {}", "-I /nonexistent");
  EXPECT_TRUE(d.complete);
  EXPECT_FALSE(d.any);
  EXPECT_TRUE(include_key_fields(d).empty());
}

TEST_F(DigestIncludes, HeaderContentChangesTheDigest)
{
  const auto inc = dir("inc");
  write(inc / "value.h", "#define VALUE 3\n");
  const std::string source = "#include \"value.h\"\n__kernel void k() {}";
  const auto before = digest(source, "-I " + inc.string());
  ASSERT_TRUE(before.complete) << before.unsure;
  EXPECT_TRUE(before.any);
  ASSERT_EQ(include_key_fields(before).size(), 1u);
  EXPECT_EQ(include_key_fields(before)[0].first, "includes");
  EXPECT_EQ(digest(source, "-I " + inc.string()).digest(), before.digest()) << "the same files, the same digest";
  write(inc / "value.h", "#define VALUE 4\n");
  EXPECT_NE(digest(source, "-I " + inc.string()).digest(), before.digest());
}

TEST_F(DigestIncludes, NestedHeaderContentChangesTheDigest)
{
  const auto inc = dir("nested");
  fs::create_directories(inc / "sub");
  write(inc / "outer.h", "#include \"sub/inner.h\"\n");
  write(inc / "sub" / "inner.h", "#include \"leaf.h\"\n");
  write(inc / "sub" / "leaf.h", "#define LEAF 1\n"); // found beside inner.h, not on -I
  const std::string source = "#include <outer.h>\n";
  const auto before = digest(source, "-I" + inc.string());
  ASSERT_TRUE(before.complete) << before.unsure;
  write(inc / "sub" / "leaf.h", "#define LEAF 2\n");
  const auto after = digest(source, "-I" + inc.string());
  ASSERT_TRUE(after.complete) << after.unsure;
  EXPECT_NE(after.digest(), before.digest());
}

TEST_F(DigestIncludes, AHeaderAppearingEarlierInTheSearchChangesTheDigest)
{
  const auto first = dir("first");
  const auto second = dir("second");
  write(second / "value.h", "#define VALUE 3\n");
  const std::string source = "#include \"value.h\"\n";
  const std::string options = "-I " + first.string() + " -I " + second.string();
  const auto before = digest(source, options);
  ASSERT_TRUE(before.complete) << before.unsure;
  write(first / "value.h", "#define VALUE 9\n"); // now shadows second/value.h
  EXPECT_NE(digest(source, options).digest(), before.digest());
}

TEST_F(DigestIncludes, QuotedDirectoryIsFound)
{
  const auto inc = dir("quoted dir");
  write(inc / "value.h", "#define VALUE 3\n");
  const auto d = digest("#include \"value.h\"\n", "-I\"" + inc.string() + "\"");
  EXPECT_TRUE(d.complete) << d.unsure;
}

TEST_F(DigestIncludes, RelativeDirectoryIsReadFromTheWorkingDirectory)
{
  const auto a = dir("cwd-a");
  const auto b = dir("cwd-b");
  fs::create_directories(a / "kernels");
  fs::create_directories(b / "kernels");
  write(a / "kernels" / "value.h", "#define VALUE 3\n");
  write(b / "kernels" / "value.h", "#define VALUE 3\n");
  const auto old = fs::current_path();
  const std::string source = "#include \"value.h\"\n";
  fs::current_path(a);
  const auto in_a = digest(source, "-I kernels");
  fs::current_path(b);
  const auto in_b = digest(source, "-I kernels");
  write(b / "kernels" / "value.h", "#define VALUE 4\n");
  const auto in_b_changed = digest(source, "-I kernels");
  fs::current_path(old);
  ASSERT_TRUE(in_a.complete && in_b.complete) << in_a.unsure << in_b.unsure;
  EXPECT_EQ(in_a.digest(), in_b.digest()) << "the same content under another root: the same key";
  EXPECT_NE(in_b_changed.digest(), in_b.digest());
}

TEST_F(DigestIncludes, ForcedIncludeContentChangesTheDigest)
{
  const auto inc = dir("forced");
  write(inc / "pre.h", "#define PRE 1\n");
  const std::string options = "-include " + (inc / "pre.h").string();
  const auto before = digest("__kernel void k() {}", options);
  ASSERT_TRUE(before.complete) << before.unsure;
  EXPECT_TRUE(before.any);
  write(inc / "pre.h", "#define PRE 2\n");
  EXPECT_NE(digest("__kernel void k() {}", options).digest(), before.digest());
}

TEST_F(DigestIncludes, EnvironmentPathsAreSearched)
{
  const auto env = dir("cpath");
  write(env / "env.h", "#define E 1\n");
  IncludeSearch search{{env.string()}};
  const auto before = digest("#include <env.h>\n", "", search);
  ASSERT_TRUE(before.complete) << before.unsure;
  write(env / "env.h", "#define E 2\n");
  EXPECT_NE(digest("#include <env.h>\n", "", search).digest(), before.digest());
}

TEST_F(DigestIncludes, SymlinkedHeaderIsFollowed)
{
  const auto inc = dir("links");
  write(inc / "real.h", "#define R 1\n");
  fs::create_symlink("real.h", inc / "value.h");
  const auto before = digest("#include \"value.h\"\n", "-I " + inc.string());
  ASSERT_TRUE(before.complete) << before.unsure;
  write(inc / "real.h", "#define R 2\n");
  EXPECT_NE(digest("#include \"value.h\"\n", "-I " + inc.string()).digest(), before.digest());
}

TEST_F(DigestIncludes, CyclesEnd)
{
  const auto inc = dir("cycle");
  write(inc / "a.h", "#pragma once\n#include \"b.h\"\n");
  write(inc / "b.h", "#pragma once\n#include \"a.h\"\n");
  const auto d = digest("#include \"a.h\"\n", "-I " + inc.string());
  EXPECT_TRUE(d.complete) << d.unsure;
}

TEST_F(DigestIncludes, WhatCannotBeKnownPassesThrough)
{
  const auto inc = dir("unsure");
  EXPECT_FALSE(digest("#define J(a, b) a##b\n#include J(H, 1)\n", "").complete) << "computed with ##";
  write(inc / "computed.h", "#include NEXT\n");
  EXPECT_FALSE(digest("#include \"computed.h\"\n", "-I " + inc.string()).complete) << "computed inside a header";
  EXPECT_FALSE(digest("__kernel void k() {}", "@" + (inc / "rsp").string()).complete) << "a response file";
}

TEST_F(DigestIncludes, ANameFoundNowhereIsKeyedAsAbsent)
{
  const auto inc = dir("nowhere");
  const std::string source = "#if defined IS_METAL\n#include <metal_stdlib>\n#endif\n#include \"nowhere.h\"\n";
  const auto before = digest(source, "-I " + inc.string());
  ASSERT_TRUE(before.complete) << before.unsure;
  EXPECT_NE(before.listing.find("absent " + (inc / "nowhere.h").string()), std::string::npos) << before.listing;
  write(inc / "nowhere.h", "#define N 1\n");
  EXPECT_NE(digest(source, "-I " + inc.string()).digest(), before.digest()) << "it appearing is a miss";
}

TEST_F(DigestIncludes, AFifoIsNeverOpenedForReading)
{
  const auto inc = dir("fifo");
  ASSERT_EQ(::mkfifo((inc / "value.h").c_str(), 0644), 0);
  const auto d = digest("#include \"value.h\"\n", "-I " + inc.string()); // would hang if it blocked
  EXPECT_FALSE(d.complete);
  EXPECT_NE(d.unsure.find("FIFO"), std::string::npos) << d.unsure;
}

TEST_F(DigestIncludes, ComputedIncludeIsKeyedLikeALiteralOne)
{
  const auto inc = dir("computed");
  write(inc / "inc_vendor.h", "#define V 1\n");
  // INCLUDE_PATH relative: the scratch directory's random name could read
  // as a predefined macro (all capitals), which is unsure by design.
  const auto old = fs::current_path();
  fs::current_path(inc.parent_path());
  const std::string source = "#ifdef KERNEL_STATIC\n#include M2S(INCLUDE_PATH/inc_vendor.h)\n#endif\n";
  const std::string options = "-D KERNEL_STATIC -D INCLUDE_PATH=computed -D XM2S(x)=#x -D M2S(x)=XM2S(x)";
  const auto before = digest(source, options);
  write(inc / "inc_vendor.h", "#define V 2\n");
  const auto after = digest(source, options);
  fs::current_path(old);
  ASSERT_TRUE(before.complete) << before.unsure;
  EXPECT_TRUE(before.any);
  EXPECT_NE(before.listing.find("computed/inc_vendor.h"), std::string::npos) << before.listing;
  EXPECT_NE(after.digest(), before.digest());
}

TEST_F(DigestIncludes, EmbeddedHeadersNeedNoFile)
{
  const auto inc = dir("embedded");
  write(inc / "disk.h", "#define D 1\n");
  const std::string header_source = "#include \"disk.h\"\n";
  const std::vector<EmbeddedHeader> embedded{{"shift.h", header_source}};
  const auto before = digest_includes("#include \"shift.h\"\n", "-I " + inc.string(), {}, embedded);
  ASSERT_TRUE(before.complete) << before.unsure;
  write(inc / "disk.h", "#define D 2\n"); // read through the embedded header
  EXPECT_NE(digest_includes("#include \"shift.h\"\n", "-I " + inc.string(), {}, embedded).digest(), before.digest());
}

TEST(DefaultIncludeSearch, SystemDirectoriesAndCpath)
{
  ::setenv("CPATH", "/test_only/a::/test_only/b", 1);
  const auto search = default_include_search();
  ::unsetenv("CPATH");
  const auto has = [&](std::string_view d) { return std::find(search.dirs.begin(), search.dirs.end(), d) != search.dirs.end(); };
  EXPECT_TRUE(has("/test_only/a"));
  EXPECT_TRUE(has(".")) << "an empty CPATH element is the working directory";
  EXPECT_TRUE(has("/test_only/b"));
  EXPECT_TRUE(has("/usr/include"));
}

} // namespace
} // namespace prewarm::store
