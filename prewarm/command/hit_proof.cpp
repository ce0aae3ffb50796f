// SPDX-License-Identifier: Apache-2.0
#include "command/hit_proof.hpp"

#include "command/proof_rerun.hpp"

#include "audit/cache_entries.hpp"
#include "audit/file_inventory.hpp"
#include "audit/layer_audit_log.hpp"
#include "bundle/app_hint.hpp"
#include "bundle/cache_kind.hpp"
#include "install/opencl_layer_environment.hpp"
#include "jobs/staged_output.hpp"

#include <fmt/format.h>

#include <set>
#include <system_error>

namespace prewarm::command {

namespace fs = std::filesystem;

namespace {

// The bytes of the regular files under `dir`; 0 when it cannot be read (the
// figure only sizes a cache and annotates a message).
std::uint64_t
tree_bytes(const fs::path& dir)
{
  const auto counts = jobs::count_staged_files(dir);
  return counts ? counts->bytes : 0;
}

// Directories of the re-run's private home that filled up and that no
// selected kind captures: caches the bundle does not carry.
std::vector<std::string>
uncaptured_caches(const fs::path& home, const std::vector<CacheKind>& kinds)
{
  std::set<fs::path> known;
  for (const auto kind : bundle::all_cache_kinds()) {
    if (const auto rel = std::filesystem::path(bundle::rules_of(kind).default_location_under_home); !rel.empty()) {
      known.insert(*rel.begin() == ".cache" ? fs::path(".cache") / *std::next(rel.begin()) : *rel.begin());
    }
  }
  (void)kinds;
  std::vector<std::pair<fs::path, std::string>> candidates; // relative dir, how to name it
  std::error_code ec;
  for (fs::directory_iterator it(home, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (!fs::is_directory(it->symlink_status(ec))) {
      continue;
    }
    const auto name = it->path().filename();
    if (name == ".cache") {
      for (fs::directory_iterator sub(it->path(), ec); !ec && sub != fs::directory_iterator(); sub.increment(ec)) {
        if (fs::is_directory(sub->symlink_status(ec))) {
          const auto rel = name / sub->path().filename();
          candidates.emplace_back(rel, fmt::format("$XDG_CACHE_HOME/{}", sub->path().filename().string()));
        }
      }
    } else {
      candidates.emplace_back(name, fmt::format("~/{}", name.string()));
    }
  }
  std::vector<std::string> out;
  for (const auto& [rel, shown] : candidates) {
    if (known.contains(rel) || bundle::home_dir_not_a_cache(rel.string())) {
      continue;
    }
    const auto files = audit::list_files(home / rel);
    if (files && !files->empty()) {
      out.push_back(fmt::format("{} ({} files, {} bytes)", shown, files->size(), tree_bytes(home / rel)));
    }
  }
  return out;
}

} // namespace

std::string_view
to_string(VerifyMode mode)
{
  switch (mode) {
  case VerifyMode::off:
    return "off";
  case VerifyMode::warn:
    return "warn";
  case VerifyMode::require:
    return "require";
  }
  return "?";
}

std::optional<VerifyMode>
parse_verify_mode(std::string_view text)
{
  for (const auto mode : {VerifyMode::off, VerifyMode::warn, VerifyMode::require}) {
    if (text == to_string(mode)) {
      return mode;
    }
  }
  return std::nullopt;
}

bool
HitProof::hit() const
{
  return run.succeeded() && misses().empty();
}

std::string
HitProof::line() const
{
  std::string text;
  for (const auto& k : usage.kinds) {
    text += fmt::format("{}{}", text.empty() ? "" : "; ", k.summary());
  }
  if (text.empty()) {
    text = "nothing captured to prove";
  }
  if (!usage.complete) {
    text += " (inotify queue overflowed: reuse counts are lower bounds)";
  }
  return text;
}

std::vector<std::string>
HitProof::misses() const
{
  std::vector<std::string> out;
  for (const auto& k : usage.kinds) {
    if (!k.hit()) {
      out.push_back(k.summary());
    }
  }
  for (const auto& w : written_into_capture) {
    out.push_back(fmt::format("{}: wrote {} file{} at the capture's path", w.kind, w.files.size(),
                              w.files.size() == 1 ? "" : "s"));
  }
  return out;
}

namespace {

// Which captured entries hold each kernel, per kind, read from the copies
// before the re-run.
CapturedKernels
captured_kernels_of(const ProofCopies& copies, const std::vector<CacheKind>& kinds)
{
  CapturedKernels captured;
  for (const auto kind : kinds) {
    const auto name = std::string(to_string(kind));
    std::set<std::string> entries;
    for (const auto& file : copies.before.at(name)) {
      entries.insert(audit::entry_of(name, file));
    }
    for (const auto& entry : entries) {
      for (const auto& kernel : audit::entry_kernel_names(name, copies.dirs.at(name), entry)) {
        captured[name][kernel].push_back(entry);
      }
    }
  }
  return captured;
}

} // namespace

Result<HitProof>
prove_hits(const HitProofRequest& request)
{
  PW_ASSIGN(auto layout, CacheCapture::prepare(request.work_dir, request.kinds,
                                               CaptureOptions{request.home, KindSelection::named,
                                                              request.custom_caches, request.install_root,
                                                              DynamoSave::never}));
  std::vector<ProofCache> caches;
  for (const auto kind : layout.kinds()) {
    const auto name = std::string(to_string(kind));
    caches.push_back({name, request.captured_root / name, layout.staging_dir(kind), ProofFiles::read_only});
  }
  // Extra caches as installed: ROOT/custom/<name>, the variable pointed there
  // by child_environment() below. Their format is the program's own: counted
  // by file, without entry names, and left writable.
  for (const auto& cache : request.custom_caches) {
    caches.push_back({fmt::format("custom/{}", cache.name), custom_staging_dir(request.captured_root, cache.name),
                      custom_staging_dir(layout.staging_root(), cache.name)});
  }

  CapturedKernels captured_kernels;
  fs::path layer_log;
  HitProof proof;
  std::optional<Result<SubprocessResult>> ran;
  // Read before the watch starts: the builder opening every captured entry's
  // metadata for its kernel names counted as the application reusing it (the
  // proof read 18-32 Triton files more than the same run under exec --audit).
  const auto read_captured = [&](const ProofCopies& copies) {
    captured_kernels = captured_kernels_of(copies, layout.kinds());
  };
  const auto rerun = [&](const ProofCopies& copies) -> Status {
    Environment env = layout.child_environment(request.base_environment);
    for (const auto kind : layout.kinds()) {
      // As the runtime sets them: sized by what is installed.
      const auto& dir = copies.dirs.at(std::string(to_string(kind)));
      for (auto& setting : bundle::cache_environment(kind, dir, tree_bytes(dir))) {
        env[setting.name] = std::move(setting.value);
      }
      for (auto& setting : bundle::installed_environment(kind)) {
        env[setting.name] = std::move(setting.value);
      }
    }
    // Programs the OpenCL layer recorded are only reused when the layer
    // serves them, as prewarm-runtime env/exec enable it where they are
    // installed (install/opencl_layer_environment.hpp): the re-run serves
    // instead of recording again, and its audit log says what it served.
    const auto programs = copies.dirs.find(std::string(to_string(CacheKind::programs)));
    if (programs != copies.dirs.end() && env.contains("OPENCL_LAYERS") &&
        install::holds_layer_records(programs->second)) {
      layer_log = request.work_dir / "layer-audit.jsonl";
      env["PREWARM_LAYER"] = "serve";
      env[std::string(audit::k_layer_audit_log_variable)] = layer_log.string();
    }
    SubprocessSpec spec = request.run;
    spec.environment = env;
    if (spec.log_file.empty()) {
      spec.log_file = request.work_dir / "rerun.log";
    }
    ran = run_subprocess(spec);
    return {};
  };
  PW_ASSIGN_CTX(proof.usage, fmt::format("job {}: hit proof", request.job_id),
                rerun_on_copies(caches, rerun, read_captured));
  PW_ASSIGN_CTX(proof.run, fmt::format("job {}: hit proof run", request.job_id), std::move(*ran));
  if (!layer_log.empty()) {
    PW_ASSIGN_CTX(const auto events, fmt::format("job {}: hit proof", request.job_id), audit::read_layer_audit_log(layer_log));
    audit::add_layer_events(proof.usage, events);
  }
  proof.causes = diagnose_misses(proof.usage, captured_kernels, request.capture_paths, request.custom_caches);
  if (request.home == HomeMode::private_home) {
    for (const auto kind : layout.kinds()) {
      const auto rel = std::filesystem::path(bundle::rules_of(kind).default_location_under_home);
      if (rel.empty()) {
        continue;
      }
      const auto files = audit::list_files(layout.private_home() / rel);
      if (files && !files->empty()) {
        proof.causes.push_back(fmt::format(
          "{}: the re-run wrote {} files to the default location ~/{} instead of {}: the program (or a "
          "library it loads) resets or ignores the variable, so the installed cache is not where it looks",
          to_string(kind), files->size(), rel.string(), cache_variable(kind)));
      }
    }
    proof.uncaptured = uncaptured_caches(layout.private_home(), layout.kinds());
  }
  return proof;
}

} // namespace prewarm::command
