// SPDX-License-Identifier: Apache-2.0
// Custom caches: a cache directory that no built-in kind (cache_kind.hpp)
// knows, declared by a command model with the variable that locates it
// (hashcat keeps its kernels under $XDG_CACHE_HOME/hashcat/kernels).
//
// In a slice, a custom cache is one `cache NAME VARIABLE` line
// (bundle_manifest.hpp) and a tree under the reserved kind directory
// "custom": PATH = "custom/" NAME "/" REL. Installed, it is ROOT/custom/NAME,
// and `env`/`exec` export VARIABLE=ROOT/custom/NAME. The reserved directory
// keeps custom names in their own name space: a later built-in kind can never
// collide with a cache a bundle already ships, and a trust policy can allow
// "custom" (all of them) or "custom/NAME" (one) beside the built-in kinds.
//
// NAME     := [a-z0-9][a-z0-9._-]{0,63}, not a built-in kind name, not "custom"
// VARIABLE := runtime_variable.hpp NAME rule, not denied
//
// A cache whose directory is one flag inside another variable's value
// (PyTensor: PYTENSOR_FLAGS="floatX=float32,base_compiledir=DIR"; Theano's
// THEANO_FLAGS, XLA's XLA_FLAGS, TensorFlow's TF_XLA_FLAGS and AWS Neuron's
// NEURON_CC_FLAGS likewise) is one line `cache NAME VARIABLE SEP KEY={dir}`:
// the variable's flags are separated by SEP ("comma" or "space"), and the
// directory goes in as the flag KEY=DIR. Where the directory is set (the
// builder's warm-up and hit proof, `env`, `exec`), the flag is MERGED into
// the value the application already has (merge_cache_flag()): its other
// flags stay, and its own KEY=... is replaced by the cache's, with a warning
// naming what was replaced (the cache wins, as every variable prewarm sets
// does; an application that must keep its own directory runs without
// prewarm).
#pragma once

#include "base/error.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::bundle {

// The kind directory every custom cache lives under.
inline constexpr std::string_view k_custom_kind = "custom";

enum class FlagSeparator {
  comma, // PYTENSOR_FLAGS, THEANO_FLAGS: "a=1,b=2"
  space, // XLA_FLAGS, TF_XLA_FLAGS, NEURON_CC_FLAGS: "--a=1 --b=2" (any run of blanks)
};

// The flag that carries a cache's directory inside its variable's value.
struct CacheFlag
{
  std::string key; // "base_compiledir", "--cache_dir": the flag is KEY=DIR
  FlagSeparator separator = FlagSeparator::comma;
  auto operator<=>(const CacheFlag&) const = default;
};

struct CustomCache
{
  std::string name;                   // "hashcat"
  std::string variable;               // "XDG_CACHE_HOME"
  std::optional<CacheFlag> flag = {}; // none: the variable's value is the directory
  auto operator<=>(const CustomCache&) const = default;
};

inline constexpr std::string_view k_flag_placeholder = "{dir}";

// "comma" / "space" (the bundle line), "," / " " (the build manifest).
std::string_view separator_word(FlagSeparator separator);
std::optional<FlagSeparator> parse_separator_word(std::string_view word);
std::optional<FlagSeparator> parse_separator_char(std::string_view text);

// A flag template as a user writes it: exactly KEY={dir}, KEY one or two
// '-' then [A-Za-z0-9_.-] (no '=', blank, ',' or quote). Errc::verify
// E_MANIFEST_FORMAT saying what is wrong: no placeholder, the placeholder
// twice, another placeholder ({path}, ${HOME}, $DIR), text after it, no KEY=.
Result<CacheFlag> parse_flag_template(std::string_view text, FlagSeparator separator);

// "base_compiledir={dir}".
std::string flag_template(const CacheFlag& flag);

// The application's value with the cache's flag merged in.
struct MergedFlags
{
  std::string value;                 // "floatX=float32,base_compiledir=DIR"
  std::vector<std::string> replaced; // the application's own KEY=... flags, dropped
};

// `existing` (the application's value; empty: unset) with every flag KEY=...
// (or KEY alone) dropped and KEY=DIR appended; the other flags keep their
// text and order. A DIR holding a separator, a blank or a quote cannot be
// carried: Errc::failed (the caller leaves the variable as it was).
Result<MergedFlags> merge_cache_flag(std::string_view existing, const CacheFlag& flag, std::string_view dir);

// The application's own flags in `value` that the cache's KEY would replace.
std::vector<std::string> conflicting_flags(std::string_view value, const CacheFlag& flag);

// The NAME rule: Errc::verify E_MANIFEST_FORMAT for a malformed name,
// E_CUSTOM_CACHE_NAME for one that collides with a built-in kind.
Status check_custom_cache_name(std::string_view name);

// Name, variable (check_exported_variable()) and flag (parse_flag_template()).
Status check_custom_cache(const CustomCache& cache);

// "custom/hashcat/kernels/x" -> "hashcat"; "" when the path is not under a
// custom cache ("pocl/..", or "custom" itself).
std::string_view custom_cache_of(std::string_view entry_path);

} // namespace prewarm::bundle
