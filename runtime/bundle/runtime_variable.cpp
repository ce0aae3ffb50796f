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

// Names that only locate a cache directory; exported as the installed
// directory. Each is read by its library as a cache, never as a place to
// load plugins or configuration from.
constexpr std::array k_locations = {
  VettedVariable{"XDG_CACHE_HOME", "the XDG cache directory (hashcat's kernels, Mesa's shaders; every XDG cache)"},
  VettedVariable{"JAX_COMPILATION_CACHE_DIR", "JAX's persistent compilation cache"},
  VettedVariable{"CUPY_CACHE_DIR", "CuPy's kernel cache"},
  VettedVariable{"CLFFT_CACHE_PATH", "clFFT's kernel cache"},
  VettedVariable{"NUMBA_CACHE_DIR", "Numba's cache of compiled functions"},
  VettedVariable{"TI_OFFLINE_CACHE_FILE_PATH", "Taichi's offline cache of compiled kernels"},
  VettedVariable{"MIOPEN_CUSTOM_CACHE_DIR", "MIOpen's kernel cache"},
  VettedVariable{"MESA_SHADER_CACHE_DIR", "Mesa's shader cache"},
  VettedVariable{"__GL_SHADER_DISK_CACHE_PATH", "NVIDIA's GL shader cache"},
  VettedVariable{"ORT_TENSORRT_CACHE_PATH", "ONNX Runtime's TensorRT engine cache"},
  VettedVariable{"VLLM_CACHE_ROOT", "vLLM's cache root (its torch.compile cache)"},
};

// Flags that only locate a cache directory, inside a variable that carries
// many flags (some of which name compilers or load code: the pair is vetted,
// never the variable).
constexpr std::array k_flags = {
  VettedFlag{"PYTENSOR_FLAGS", "base_compiledir", "PyTensor's compiled C modules (compiledir_<platform>/ below it)"},
  VettedFlag{"THEANO_FLAGS", "base_compiledir", "Theano's compiled C modules"},
  VettedFlag{"XLA_FLAGS", "--xla_gpu_per_fusion_autotune_cache_dir", "XLA's per-fusion GPU autotuning results"},
  VettedFlag{"TF_XLA_FLAGS", "--tf_xla_persistent_cache_directory", "TensorFlow's persistent XLA executable cache"},
  VettedFlag{"NEURON_CC_FLAGS", "--cache_dir", "the AWS Neuron compiler's cache"},
};

// Switches that turn a cache on or off or size it; their values are words.
constexpr std::array k_switches = {
  VettedVariable{"PYOPENCL_NO_CACHE", "PyOpenCL's own cache off (PoCL's cache then serves)"},
  VettedVariable{"POCL_KERNEL_CACHE", "PoCL's kernel cache on or off"},
  VettedVariable{"SYCL_CACHE_MAX_SIZE", "the DPC++ cache size limit"},
  VettedVariable{"SYCL_CACHE_THRESHOLD", "the DPC++ cache eviction age"},
  VettedVariable{"SYCL_CACHE_MIN_DEVICE_IMAGE_SIZE", "the smallest image DPC++ caches"},
  VettedVariable{"SYCL_CACHE_MAX_DEVICE_IMAGE_SIZE", "the largest image DPC++ caches"},
  VettedVariable{"SYCL_CACHE_EVICTION_DISABLE", "DPC++ cache eviction off"},
  VettedVariable{"SYCL_CACHE_IN_MEM", "the DPC++ in-memory cache on or off"},
  VettedVariable{"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "what JAX caches"},
  VettedVariable{"JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "what JAX caches"},
  VettedVariable{"JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES", "XLA's caches beside JAX's (their paths enter JAX's keys)"},
  VettedVariable{"ORT_TENSORRT_ENGINE_CACHE_ENABLE", "ONNX Runtime's TensorRT engine cache on"},
  VettedVariable{"VLLM_DISABLE_COMPILE_CACHE", "vLLM's compile cache on or off"},
};

bool
is_switch_value(std::string_view value)
{
  return !value.empty() && value.size() <= 32 && std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

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

namespace prewarm::bundle {

std::span<const VettedVariable>
cache_locations()
{
  return k_locations;
}

std::span<const VettedVariable>
cache_switches()
{
  return k_switches;
}

std::span<const VettedFlag>
cache_flags()
{
  return k_flags;
}

Status
check_allowed_variable(std::string_view name, std::string_view value, VariableRole role,
                       const std::set<std::string, std::less<>>& policy_allowed)
{
  if (policy_allowed.contains(name)) {
    return {};
  }
  if (role == VariableRole::cache_flag) {
    if (std::ranges::any_of(k_flags, [&](const VettedFlag& f) { return f.variable == name && f.key == value; })) {
      return {};
    }
    return fail(Errc::verify,
                fmt::format("variable {} with the flag {} is not allowed: not a vetted cache-locating flag (allow "
                            "list: a bundle alone may add only a vetted flag, such as PYTENSOR_FLAGS's "
                            "base_compiledir, to a flags variable; add {} to the trust policy's install.environment "
                            "to allow it)",
                            name, in_quotes(value), name),
                "E_VARIABLE_NOT_ALLOWED");
  }
  const auto vetted = role == VariableRole::cache_location ? cache_locations() : cache_switches();
  const auto it = std::find_if(vetted.begin(), vetted.end(), [&](const VettedVariable& v) { return v.name == name; });
  if (it != vetted.end()) {
    if (role == VariableRole::runtime_env && !is_switch_value(value)) {
      return fail(Errc::verify,
                  fmt::format("variable {} is a vetted cache switch, but its value {} is not a short word "
                              "([A-Za-z0-9._-]{{1,32}}); switches take numbers and flags",
                              name, in_quotes(value)),
                  "E_VARIABLE_NOT_ALLOWED");
    }
    return {};
  }
  const auto other = role == VariableRole::cache_location ? cache_switches() : cache_locations();
  const bool other_role =
    std::any_of(other.begin(), other.end(), [&](const VettedVariable& v) { return v.name == name; });
  return fail(Errc::verify,
              fmt::format("variable {} is not allowed: {} (allow list: a bundle alone may export only the vetted "
                          "cache-locating names as a custom cache's variable and the vetted cache switches as "
                          "runtime_env; add it to the trust policy's install.environment to allow it)",
                          name,
                          other_role ? (role == VariableRole::cache_location
                                          ? "it is a cache switch, not a directory a custom cache can locate"
                                          : "it locates a cache directory, which only a custom cache may set (to the "
                                            "installed directory)")
                                     : (role == VariableRole::cache_location
                                          ? "not a vetted cache-locating variable"
                                          : "not a vetted cache switch")),
              "E_VARIABLE_NOT_ALLOWED");
}

} // namespace prewarm::bundle
