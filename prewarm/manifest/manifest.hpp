// SPDX-License-Identifier: Apache-2.0
// The build manifest: what `prewarm build` fills caches for.
//
// Format (version 1; strict: unknown keys, wrong types, duplicates and empty
// lists are errors naming FILE:LINE:COLUMN and the field):
//   version: 1
//   models:                               non-empty, names unique
//     - name: NAME                        [A-Za-z0-9][A-Za-z0-9._-]*
//       preset: PRESET                    one of preset | architecture | command
//       architecture: ARCHITECTURE        inline, same fields as presets.hpp
//       command:                          any program whose caches are captured
//         argv: [PROGRAM, ARG...]         "{precision}" in an element is replaced;
//                                         a command that names "{precision}" nowhere
//                                         (argv, cwd, env values) has no precision
//                                         axis: one job per target, id TARGET/MODEL
//         cwd: DIR                        relative to the manifest's directory
//         env: {NAME: VALUE}
//         timeout: DURATION               "30m" (default 1h)
//         shell: false                    true: argv is joined and run by /bin/sh -c
//         kinds: [pocl, cuda, ...]        cache kinds to collect (default: all)
//         runtime_env: {NAME: VALUE}      exported at run time (runtime_needs.hpp)
//         caches: [{name, variable, subdir}]  custom caches (runtime_needs.hpp)
//                 [{name, variable, flag: "KEY={dir}", separator: "," | " "}]
//                                         a directory carried as a flag inside the
//                                         variable's value (PYTENSOR_FLAGS's
//                                         base_compiledir), merged into the
//                                         application's own value
//         verify: warn                    hit proof after the capture: require | warn | off
//                                         (command/hit_proof.hpp; default warn)
//   precisions: [fp32, fp16, bf16, int8]  non-empty, unique
//   shapes:                               optional; defaults from model::Shapes
//     batch_sizes: [1]                    non-empty, unique, >= 1
//     prefill_lengths: [16]               non-empty, unique, >= 1
//     decode_steps: 2                     >= 0
//   coverage: representative|full         optional (default representative)
//   targets: [cpu, arc-a770, ...]         registry names; non-empty, unique; an Intel
//                                         target may be {name: arc-b580, profile: FILE}:
//                                         its card's key profile (intel_profile.hpp,
//                                         `prewarm intel-profile`; FILE relative to the
//                                         manifest's directory; for that target only)
//   bundle:                               optional
//     channel: NAME                       default "default"
//     expires: DURATION                   default 90d
//     serial: N                           default: the build time (bundle_build/bundle_header.hpp;
//                                         --serial overrides)
#pragma once

#include "base/error.hpp"
#include "bundle/cache_kind.hpp"
#include "manifest/intel_profile.hpp"
#include "manifest/presets.hpp"
#include "manifest/runtime_needs.hpp"
#include "manifest/target_registry.hpp"
#include "model/architecture.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::manifest {

// Where something was written, for messages that point back at the manifest.
struct SourcePosition
{
  std::string file;
  int line = 0;   // 1-based; 0 when unknown
  int column = 0;
  std::string to_string() const; // "FILE:LINE:COL"
};

enum class ShellMode { direct, shell };

// The hit proof of a command workload (prewarm/command/hit_proof.hpp): run it
// again on a copy of its capture and count reused vs new per kind.
// warn is the default: the proof costs one more run of the warm-up, and a
// manifest that built yesterday keeps building, with every miss, its cause
// and its fix on the job line; require makes a miss fail the job (for CI and
// for bundles whose whole point is one cache); off skips the second run.
enum class VerifyMode { off, warn, require };

struct CommandWorkload
{
  std::vector<std::string> argv; // may hold "{precision}"
  std::filesystem::path cwd;     // absolute (resolved against the manifest's directory); empty = inherit
  std::map<std::string, std::string> env;
  std::chrono::seconds timeout{3600};
  ShellMode shell = ShellMode::direct;
  std::vector<bundle::CacheKind> kinds; // empty = every kind not opt-in, unless:
  bool no_builtin_kinds = false;        // `kinds: []`: only the custom caches (a program with caches of its own, JAX)
  std::map<std::string, std::string> runtime_env; // signed into its slices
  std::vector<CustomCacheSpec> caches;            // custom caches
  VerifyMode verify = VerifyMode::warn;

  // argv with every "{precision}" replaced.
  std::vector<std::string> argv_for(model::Precision precision) const;

  // Whether "{precision}" appears in argv, cwd or an env value: only then
  // does the command run once per precision of the manifest.
  bool uses_precision() const;
};

enum class ModelSource { preset, architecture, command };

struct ModelSpec
{
  std::string name;
  ModelSource source = ModelSource::preset;
  std::string preset;                                    // ModelSource::preset
  std::optional<model::ModelArchitecture> architecture; // preset or architecture (resolved)
  std::optional<CommandWorkload> command;                // ModelSource::command
  SourcePosition position;

  bool is_builtin() const { return architecture.has_value(); }
};

struct BundleOptions
{
  std::string channel = "default";
  std::chrono::seconds expires{std::chrono::hours(24 * 90)};
  std::string expires_text = "90d";
  std::optional<std::uint64_t> serial; // nullopt: the builder derives one (bundle_build/bundle_header.hpp)
};

struct Manifest
{
  std::string source_name;   // path as given, or "<embedded default.yaml>"
  std::string bytes_sha256;  // digest of the exact YAML bytes (recorded in the bundle)
  std::filesystem::path base_directory; // for relative command cwd
  std::vector<ModelSpec> models;
  std::vector<model::Precision> precisions;
  model::Shapes shapes;
  model::Coverage coverage = model::Coverage::representative;
  std::vector<std::string> targets;
  std::map<std::string, IntelProfile, std::less<>> target_profiles; // by target name, where one is named
  BundleOptions bundle;

  const IntelProfile* find_profile(std::string_view target) const; // nullptr: the manifest names none

  const ModelSpec* find_model(std::string_view name) const;
};

// The precision names in manifests and job ids (model::to_string): "fp32", "fp16", "bf16", "int8".
std::string_view precision_name(model::Precision precision);
std::optional<model::Precision> parse_precision(std::string_view text);

struct ManifestInputs
{
  const TargetRegistry& registry;
  const PresetLibrary& presets;
};

// Strict parse; `source_name` is used in messages, `base_directory` resolves
// relative command cwds.
Result<Manifest> parse_manifest(std::string_view text,
                                std::string source_name,
                                std::filesystem::path base_directory,
                                const ManifestInputs& inputs);

Result<Manifest> load_manifest_file(const std::filesystem::path& path, const ManifestInputs& inputs);
Result<Manifest> load_default_manifest(const ManifestInputs& inputs); // manifests/default.yaml, embedded
std::string_view default_manifest_text();

} // namespace prewarm::manifest
