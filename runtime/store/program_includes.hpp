// SPDX-License-Identifier: Apache-2.0
// The files a program's source may pull in from disk, as part of its key.
// A program built from OpenCL C with `-I dir` reads headers the source text
// does not hold: a key of source and options alone would serve the binary of
// an old header after the header changed (a new application version over a
// persistent root). The key therefore also holds the state of every file the
// preprocessor could have opened, found the way a compiler finds it.
//
// What is scanned: every `#include`, `#include_next`, `#import` and `#embed`
// directive (`#` or `%:`, comments allowed between `#` and the name) and
// every `__has_include`, `__has_include_next` and `__has_embed` operand,
// in the source after line splicing, whatever the conditionals around them
// (a directive in a dead `#if` branch only adds candidates), then the same
// in every file found, recursively; plus the options' `-include` and
// `-imacros` files.
//
// Where each name is looked for (over-approximated: a candidate the
// compiler would not have tried only adds a line): the includer's own
// directory (the working directory for the program's source, whose
// directory is the driver's own), every directory of the options
// (`-I dir`, `-Idir`, `-I"dir"`, `-iquote`, `-isystem`, `-idirafter`, each
// spelling read both as the shell would split it and split at blanks only,
// since drivers differ; relative ones against the working directory), the
// compiler's environment paths (CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH,
// OBJC_INCLUDE_PATH) and the system directories.
//
// Listing (IncludeDigest::listing, sorted, one line per candidate path, the
// path spelled as the compiler would spell it: a relative `-I` stays
// relative, so the key does not depend on where the application lives, and
// the content is what makes it safe):
//   sha256:<hex> <path>   a regular file (its content)
//   absent <path>         nothing there
//   directory <path>      a directory (never included)
// The key field is the SHA-256 of that text.
//
// A computed include (`#include MACRO`) is expanded with the options' -D and
// every #define seen, to every name it can stand for (include_macros.hpp).
//
// A name found in none of the candidates is keyed as absent from all of
// them (it appearing there later is a miss): the directives are read without
// their conditionals, so a dead branch's name for another platform
// (hashcat's <metal_stdlib>) is common, and the compiler's own directories
// of this host (clang's resource headers, PoCL's) are candidates; what a
// compiler finds inside its own installation elsewhere is keyed by the
// driver's identity, not here.
//
// Unsure => the program is passed through (never served, never recorded),
// with the reason: a computed include that cannot be expanded with
// certainty (token pasting, a name the compiler may predefine, ...) or
// stands in a text whose comments cannot be told apart (a raw string, a
// digit separator), a candidate that is not a regular file or directory
// (a FIFO is never opened for reading: O_NONBLOCK), an unreadable one,
// trigraphs, a response file (`@file`) or an option that moves the search
// (`-iprefix`, `-isysroot`, `--sysroot`, `-Xclang`, modules), and limits
// (depth, number of files, size).
#pragma once

#include "store/include_directives.hpp"
#include "store/include_macros.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prewarm::store {

// The directories and forced includes an options string names (both
// splittings, see above), or why it cannot be known.
struct IncludeOptions
{
  std::vector<std::string> dirs;   // in order, duplicates removed
  std::vector<std::string> forced; // -include / -imacros files
  std::vector<MacroDefinition> macros; // -D and -U, both splittings
  std::string unsure;
};
IncludeOptions parse_include_options(std::string_view options);

// The places after the options' own directories.
struct IncludeSearch
{
  std::vector<std::string> dirs;
};
// From the environment (CPATH and friends; an empty element is the working
// directory) and the system directories.
IncludeSearch default_include_search();

// A header handed to clCompileProgram (input_headers / header_include_names):
// the name it is included by and its source.
struct EmbeddedHeader
{
  std::string name;
  std::string_view source;
};

struct IncludeDigest
{
  bool complete = true;  // false: pass the program through
  std::string unsure;    // why not complete
  std::string listing;   // see above
  bool any = false;      // a name or a forced include was seen: the key holds a field
  std::string digest() const;
};

IncludeDigest digest_includes(std::string_view source, std::string_view options, const IncludeSearch& search,
                              const std::vector<EmbeddedHeader>& embedded = {});

// The key field for a program (name "includes", value the digest), or none
// when the source includes nothing.
std::vector<std::pair<std::string, std::string>> include_key_fields(const IncludeDigest& digest);

} // namespace prewarm::store
