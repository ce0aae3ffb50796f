// SPDX-License-Identifier: Apache-2.0
// Environment variables a bundle may ask the runtime to export: a command
// model's `runtime_env` (signed `env NAME VALUE` lines) and the variable that
// locates a custom cache (`cache NAME VARIABLE`).
//
// Two rules, because a deny list cannot be complete (an adversarial run found
// 41 code-loading names a deny list missed: CUDA_INJECTION64_PATH,
// OPENSSL_CONF, GIT_EXEC_PATH, TRITON_PTXAS_PATH, CC, SSL_CERT_FILE, ...):
//
// 1. The ALLOW list decides what `env`/`exec` export (check_allowed_variable):
//    a bundle alone may have exported only
//      - as a custom cache's VARIABLE (its value is then the installed
//        directory, inside the root): a vetted cache-locating name,
//        k_cache_locations below;
//      - as a runtime_env line: a vetted cache switch, k_cache_switches
//        below, whose value is a short word ([A-Za-z0-9._-]{1,32}: a number
//        or a flag, never a path);
//    anything else only when the trust policy names it (`install.environment:
//    [NAME...]`, trust_policy.hpp): the image's owner vouches for it, never
//    the bundle. The runtime's own variables (the built-in kinds', PREWARM_*)
//    are set by the runtime from what is installed, never by a bundle.
//    Residual trust, stated plainly: a cache is code. PoCL loads the .so
//    files of its cache, Triton and Inductor load compiled modules, NEO and
//    CUDA load binaries, XDG_CACHE_HOME moves every XDG cache of the
//    application (hashcat's kernels, Mesa's shaders, pip's wheels). A signed
//    bundle can plant what those caches hold, which is exactly what the
//    signature vouches for; what the allow list stops is a bundle reaching
//    code OUTSIDE its caches (loaders, interpreters, tools, TLS, proxies).
// 2. The DENY list below is a hard floor under both: names that no policy
//    can allow either. It is checked by the builder when it reads the build
//    manifest (the error names the manifest line) and by the runtime on
//    every signed manifest it parses.
//
// Denied, because they change which code runs or where it is loaded from,
// not which kernels are cached:
//   loaders and interpreters   LD_*, DYLD_*, GCONV_PATH, GLIBC_TUNABLES, MALLOC_*,
//                              LOCPATH, NLSPATH, HOSTALIASES, RES_OPTIONS, LOCALDOMAIN,
//                              PATH, HOME, SHELL, ENV, BASH_ENV, BASH_FUNC_*, IFS, CDPATH,
//                              TMPDIR, PYTHON*, PERL5*, RUBY*, NODE_OPTIONS, NODE_PATH,
//                              JAVA_TOOL_OPTIONS, _JAVA_OPTIONS, CLASSPATH, LUA_*
//   GPU loaders and layers     OCL_ICD_*, OPENCL_LAYERS, OPENCL_LAYER_PATH, ZE_*,
//                              CUDA_VISIBLE_DEVICES, __GLX_*, VK_*
//   prewarm's own              PREWARM_* and every variable a built-in cache kind
//                              sets (cache_kind.hpp: POCL_CACHE_DIR, CUDA_CACHE_*, ...):
//                              those are the runtime's to set, from what is installed.
//
// NAME := [A-Za-z_][A-Za-z0-9_]{0,127}. VALUE: the manifest TEXT rule,
// 1..1024 bytes of printable ASCII with no leading, trailing or double space.
#pragma once

#include "base/error.hpp"

#include <set>
#include <span>
#include <string>
#include <string_view>

namespace prewarm::bundle {

inline constexpr std::size_t k_max_variable_name = 128;
inline constexpr std::size_t k_max_variable_value = 1024;

// The NAME rule above.
bool is_variable_name(std::string_view name);

// The VALUE rule above.
bool is_variable_value(std::string_view value);

// A denied name: Errc::verify, code E_DENIED_VARIABLE, naming the variable and
// the rule it falls under ("LD_PRELOAD: loader variable (LD_*)").
// A malformed name: Errc::verify, code E_MANIFEST_FORMAT.
Status check_exported_variable(std::string_view name);

enum class VariableRole {
  cache_location, // a custom cache's VARIABLE: exported as the installed directory
  runtime_env,    // a runtime_env line: exported with the bundle's value
  cache_flag,     // a custom cache's VARIABLE carrying the directory as the flag KEY=DIR (value: KEY)
};

struct VettedVariable
{
  std::string_view name;
  std::string_view what; // why it is safe: what it moves or switches
};

// A flag that only locates a cache directory inside a flags variable
// (custom_cache.hpp): the bundle adds KEY=DIR and nothing else to it.
struct VettedFlag
{
  std::string_view variable; // "PYTENSOR_FLAGS"
  std::string_view key;      // "base_compiledir"
  std::string_view what;
};

// The vetted names of rule 1.
std::span<const VettedVariable> cache_locations();
std::span<const VettedVariable> cache_switches();
std::span<const VettedFlag> cache_flags();

// Rule 1 (after check_exported_variable()): Errc::verify
// E_VARIABLE_NOT_ALLOWED naming the variable and the rule, unless `name` is
// vetted for `role` or `policy_allowed` names it. A vetted switch whose value
// is not a short word is refused the same way. For VariableRole::cache_flag,
// `value` is the flag's KEY: vetted is the pair (name, KEY).
Status check_allowed_variable(std::string_view name,
                              std::string_view value,
                              VariableRole role,
                              const std::set<std::string, std::less<>>& policy_allowed);

} // namespace prewarm::bundle
