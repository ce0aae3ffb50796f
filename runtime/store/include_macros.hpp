// SPDX-License-Identifier: Apache-2.0
// Computed includes (`#include M2S(INCLUDE_PATH/inc_vendor.h)`, hashcat's
// every kernel; `#include COMPARE_S`), expanded to every header name they
// can stand for, so that they are keyed like literal ones
// (program_includes.hpp).
//
// Over-approximation: where a macro has several definitions among the
// options' -D and every #define of every scanned text, each is tried, and a
// macro defined by a text or ever #undef'd (or -U) is also tried undefined:
// whichever is in force at the include is among the results. Each result
// that is no header name is a compile error, not a candidate. Unsure (the
// program is passed through): token pasting (##), variadic macros, an
// identifier the compiler may predefine (a leading underscore, no lowercase
// letter, an OpenCL extension's cl_ name, a system name such as linux), a
// function-like name completed by what follows its expansion, more than 64
// results, a nesting over 64. An include that expands to no header name at
// all adds nothing: it is a compile error where it is live.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::store {

struct MacroDefinition
{
  std::string name;
  bool undef = false; // an #undef (or -U): the name may be undefined
  bool function_like = false;
  bool variadic = false;
  std::vector<std::string> params;
  std::string body; // the replacement list, as written
};

// A #define's text after `define` ("NAME(a, b) body", "NAME body"), or an
// #undef's; nullopt when it names nothing.
std::optional<MacroDefinition> parse_macro_line(std::string_view rest, bool undef);

// -D NAME, -DNAME=VALUE, -D 'F(x)=BODY', -U NAME in `words` (one splitting).
std::vector<MacroDefinition> option_macros(const std::vector<std::string>& words);

struct ExpandedNames
{
  std::vector<std::string> names; // header names, without quotes or brackets
  std::string unsure;
};

// Every header name `operand` (what follows `#include`) can expand to.
// Option definitions are in force from the start (unless -U'd or
// #undef'd somewhere); text definitions may or may not be.
ExpandedNames expand_include_operand(std::string_view operand, const std::vector<MacroDefinition>& option_definitions,
                                     const std::vector<MacroDefinition>& text_definitions);

} // namespace prewarm::store
