// SPDX-License-Identifier: Apache-2.0
// Environment variables a bundle may ask the runtime to export: a command
// model's `runtime_env` (signed `env NAME VALUE` lines) and the variable that
// locates a custom cache (`cache NAME VARIABLE`). Both are checked twice:
// by the builder when it reads the build manifest (the error names the
// manifest line), and by the runtime on every signed manifest it parses and
// again before `env`/`exec` export anything, so a validly signed bundle still
// cannot make the runtime export a denied name.
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

} // namespace prewarm::bundle
