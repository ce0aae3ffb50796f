// SPDX-License-Identifier: Apache-2.0
// The builder's rules of a cache kind, one row per kind (kind_builder_rules.cpp),
// beside the shipped rules of bundle/cache_kind.hpp: what a slice of the kind
// requires of the host it installs on, and which variables of the
// application's environment make its capture miss or stay empty. The table is
// indexed by CacheKind; a kind without a row fails the build.
#pragma once

#include "bundle/cache_kind.hpp"
#include "command/identity.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::command {

// What a kind's requirements are read from, probed on the build host only
// when a selected kind needs it (flags).
enum class HostFacts : unsigned {
  none = 0,
  nvidia_gpus = 1U << 0U,    // nvidia-smi / /proc (identity.hpp probe_nvidia_gpus)
  opencl_devices = 1U << 1U, // the OpenCL devices of the build host
  frameworks = 1U << 2U,     // the Python frameworks of the command's interpreter (framework_probe)
};
constexpr HostFacts
operator|(HostFacts a, HostFacts b)
{
  return static_cast<HostFacts>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr bool
needs(HostFacts facts, HostFacts fact)
{
  return (static_cast<unsigned>(facts) & static_cast<unsigned>(fact)) != 0;
}

// Whether a command that names no kinds captures this one.
enum class DefaultCapture { included, opt_in };

// What the capture sets up for the kind beyond its variables
// (cache_capture.cpp), one value per mechanism.
enum class CaptureSets {
  variables_only,
  // Drops PYTHONDONTWRITEBYTECODE: set to anything it stops Python writing
  // bytecode, so the capture would stay empty.
  bytecode_writing,
  // Adds the Python hook of torch captures (precompile_hook.hpp): it
  // saves Dynamo's precompiled frames at exit where precompile is on, and
  // has the program's own Triton compiles use torch's ptxas.
  torch_capture_hook,
  // Loads prewarm's OpenCL layer in record mode (runtime/layer).
  opencl_layer_recording,
};

struct KindBuilderRules
{
  bundle::CacheKind kind;
  // Where the row's rules come from.
  std::string_view source;
  // The facts `require` reads.
  HostFacts needs;
  DefaultCapture default_capture;
  CaptureSets capture_sets;
  // Adds the requirements (and the warnings for facts the build host lacks)
  // of a slice of `identity.kind` to `identity`.
  void (*require)(KindIdentity& identity, const IdentityFacts& facts, FrameworkRequirements frameworks);
  // Adds one readable line per variable of `environment` that makes the
  // capture of `kind` miss, stay empty or be unusable. Null: none known.
  void (*traps)(const Environment& environment, bundle::CacheKind kind, std::vector<std::string>& traps) = nullptr;
};

const KindBuilderRules& builder_rules_of(bundle::CacheKind kind);

// The facts the rows of `kinds` need, together.
HostFacts facts_needed(std::span<const bundle::CacheKind> kinds);

// Whether one of `kinds` sets `what` up at the capture.
bool sets_up(std::span<const bundle::CacheKind> kinds, CaptureSets what);

} // namespace prewarm::command
