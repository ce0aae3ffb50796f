// SPDX-License-Identifier: Apache-2.0
#include "bundle/runtime_variable.hpp"

#include "base/encoding.hpp"
#include "bundle/cache_kind.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace prewarm::bundle {

namespace {

struct DeniedName
{
  std::string_view name; // exact name, or a prefix when it ends in '*'
  std::string_view why;
};

constexpr std::array k_denied = {
  DeniedName{"LD_*", "dynamic loader variable"},
  DeniedName{"DYLD_*", "dynamic loader variable"},
  DeniedName{"GCONV_PATH", "loads character-set modules (a classic set-uid escape)"},
  DeniedName{"GLIBC_TUNABLES", "changes the C library's behaviour"},
  DeniedName{"MALLOC_*", "changes the C library's allocator"},
  DeniedName{"LOCPATH", "loads locale data"},
  DeniedName{"NLSPATH", "loads message catalogs"},
  DeniedName{"HOSTALIASES", "changes name resolution"},
  DeniedName{"RES_OPTIONS", "changes name resolution"},
  DeniedName{"LOCALDOMAIN", "changes name resolution"},
  DeniedName{"PATH", "decides which programs run"},
  DeniedName{"HOME", "moves every per-user file of the application"},
  DeniedName{"SHELL", "decides which shell runs"},
  DeniedName{"ENV", "a shell startup file"},
  DeniedName{"BASH_ENV", "a shell startup file"},
  DeniedName{"BASH_FUNC_*", "exported shell functions"},
  DeniedName{"IFS", "changes how shells split words"},
  DeniedName{"CDPATH", "changes where shells cd to"},
  DeniedName{"TMPDIR", "moves every temporary file of the application"},
  DeniedName{"PYTHON*", "Python interpreter variable"},
  DeniedName{"PERL5*", "Perl interpreter variable"},
  DeniedName{"RUBY*", "Ruby interpreter variable"},
  DeniedName{"NODE_OPTIONS", "Node.js interpreter variable"},
  DeniedName{"NODE_PATH", "Node.js interpreter variable"},
  DeniedName{"JAVA_TOOL_OPTIONS", "Java interpreter variable"},
  DeniedName{"_JAVA_OPTIONS", "Java interpreter variable"},
  DeniedName{"CLASSPATH", "Java interpreter variable"},
  DeniedName{"LUA_*", "Lua interpreter variable"},
  DeniedName{"OCL_ICD_*", "OpenCL ICD loader variable (decides which driver loads)"},
  DeniedName{"OPENCL_LAYERS", "OpenCL loader layer (loads code into the application)"},
  DeniedName{"OPENCL_LAYER_PATH", "OpenCL loader layer (loads code into the application)"},
  DeniedName{"ZE_*", "Level Zero loader variable"},
  DeniedName{"VK_*", "Vulkan loader variable"},
  DeniedName{"__GLX_*", "GL vendor library selection"},
  DeniedName{"CUDA_VISIBLE_DEVICES", "decides which GPUs the application sees"},
  DeniedName{"PREWARM_*", "prewarm's own variable"},
};

bool
matches(std::string_view pattern, std::string_view name)
{
  if (pattern.ends_with('*')) {
    return name.starts_with(pattern.substr(0, pattern.size() - 1));
  }
  return name == pattern;
}

} // namespace

bool
is_variable_name(std::string_view name)
{
  if (name.empty() || name.size() > k_max_variable_name) {
    return false;
  }
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name.front())) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

bool
is_variable_value(std::string_view value)
{
  if (value.empty() || value.size() > k_max_variable_value || value.front() == ' ' || value.back() == ' ' ||
      value.find("  ") != std::string_view::npos) {
    return false;
  }
  return std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

Status
check_exported_variable(std::string_view name)
{
  if (!is_variable_name(name)) {
    return fail(Errc::verify,
                fmt::format("variable name {} is not of the form [A-Za-z_][A-Za-z0-9_]{{0,127}}", in_quotes(name)),
                "E_MANIFEST_FORMAT");
  }
  for (const auto& denied : k_denied) {
    if (matches(denied.name, name)) {
      return fail(Errc::verify,
                  fmt::format("variable {} is denied: {} ({}); a bundle may only set variables that locate or tune "
                              "kernel caches",
                              name, denied.why, denied.name),
                  "E_DENIED_VARIABLE");
    }
  }
  for (const auto kind : all_cache_kinds()) {
    for (const auto& setting : cache_environment(kind, "/", 0)) {
      if (setting.name == name) {
        return fail(Errc::verify,
                    fmt::format("variable {} is denied: the runtime sets it for the built-in cache kind {} from "
                                "what is installed",
                                name, to_string(kind)),
                    "E_DENIED_VARIABLE");
      }
    }
  }
  return {};
}

} // namespace prewarm::bundle
