// SPDX-License-Identifier: Apache-2.0
// The lexical half of program_includes.hpp: the include names one OpenCL C
// text writes (directives and __has_include operators, after line splicing
// and, where the text lexes as C, without comments), the operands of its
// computed includes and its #define/#undef lines, or why it cannot be read
// (a trigraph, a directive spelled with a universal character name, a
// computed include in a text read with its comments).
#pragma once

#include "store/include_macros.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace prewarm::store {

// One include name as written, or why the text cannot be scanned.
struct ScannedIncludes
{
  std::vector<std::string> names;           // literal names, in order, repeats kept
  std::vector<std::string> computed;        // operands of computed includes (include_macros.hpp)
  std::vector<MacroDefinition> definitions; // every #define and #undef
  std::string unsure;                       // empty: every include can be read
};
ScannedIncludes scan_include_directives(std::string_view text);

} // namespace prewarm::store
