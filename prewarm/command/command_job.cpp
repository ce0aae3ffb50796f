// SPDX-License-Identifier: Apache-2.0
#include "command/command_job.hpp"

#include "audit/file_inventory.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "bundle/custom_cache.hpp"
#include "command/capture_out_of_reach.hpp"
#include "command/kind_builder_rules.hpp"
#include "host/cpu_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

namespace prewarm::command {

namespace {

constexpr std::string_view k_precision_placeholder = "{precision}";

std::string
human_bytes(std::uint64_t bytes)
{
  if (bytes < 1024) {
    return fmt::format("{} B", bytes);
  }
  if (bytes < 1024 * 1024) {
    return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024.0);
  }
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string
requirement_text(const std::vector<bundle::Requirement>& requirements)
{
  if (requirements.empty()) {
    return "(no requirements)";
  }
  std::string text;
  for (const auto& r : requirements) {
    if (!text.empty()) {
      text += ", ";
    }
    text += fmt::format("{} {} {}", r.key, r.op, r.value);
  }
  return text;
}

} // namespace

std::string
expand_template(std::string_view text, std::string_view precision)
{
  std::string out;
  std::size_t pos = 0;
  for (;;) {
    const auto hit = text.find(k_precision_placeholder, pos);
    if (hit == std::string_view::npos) {
      out.append(text.substr(pos));
      return out;
    }
    out.append(text.substr(pos, hit - pos));
    out.append(precision);
    pos = hit + k_precision_placeholder.size();
  }
}

std::string
CommandJobResult::job_line() const
{
  // The bundle manifest's TEXT: printable ASCII, single spaces, at most 1024
  // bytes. A `python -c` program holds newlines; keep the line readable.
  std::string versions;
  for (const auto& [key, version] : frameworks) {
    if (key == "framework.python") {
      continue; // always there; the dynamo slice's requirement names it
    }
    versions +=
      fmt::format("{}{} {}", versions.empty() ? " [" : ", ", key.substr(prop::framework_prefix.size()), version);
  }
  if (!versions.empty()) {
    versions += ']';
  }
  const std::string raw = fmt::format("command {}{}: {}", job_id, versions, quote_argv(argv));
  std::string line;
  for (const char c : raw) {
    const bool printable = c > ' ' && c < 0x7f;
    if (!printable) {
      if (!line.empty() && line.back() != ' ') {
        line += ' ';
      }
      continue;
    }
    line += c;
  }
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  if (line.size() > 1024) {
    line.resize(1021);
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    line += "...";
  }
  return line;
}

std::optional<std::string>
CommandJobResult::required_proof_failure() const
{
  if (verify != VerifyMode::require || !hit_proof || hit_proof->hit()) {
    return std::nullopt;
  }
  std::string text = fmt::format("job {}: verify: require, and the captured caches do not hit:", job_id);
  if (!hit_proof->run.succeeded()) {
    text += fmt::format("\n  the second run {} (log: {})", hit_proof->run.describe(), hit_proof_log.string());
  }
  for (const auto& miss : hit_proof->misses()) {
    text += fmt::format("\n  missed: {}", miss);
  }
  for (const auto& cause : hit_proof->causes) {
    text += fmt::format("\n  cause: {}", cause);
  }
  for (const auto& cache : hit_proof->uncaptured) {
    text += fmt::format("\n  not captured: {}", cache);
  }
  return text;
}

std::optional<std::string>
CommandJobResult::packing_failure() const
{
  if (capture.refusals.empty()) {
    return std::nullopt;
  }
  std::string text = fmt::format("job {}: the captured caches cannot be packed (nothing of this job is packaged; "
                                 "the hit proof did not run):",
                                 job_id);
  for (const auto& refusal : capture.refusals) {
    text += fmt::format("\n  {}", refusal);
  }
  return text;
}

std::vector<SliceGroup>
CommandJobResult::slice_groups() const
{
  std::vector<SliceGroup> groups;
  for (const auto& identity : identities) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const SliceGroup& g) { return g.requirements == identity.requirements; });
    if (it == groups.end()) {
      const bool names_frameworks =
        std::any_of(identity.requirements.begin(), identity.requirements.end(),
                    [](const bundle::Requirement& r) { return r.key.starts_with(prop::framework_prefix); });
      groups.push_back(SliceGroup{
        {identity.kind}, {}, identity.requirements, names_frameworks ? site_packages : std::vector<std::string>{}});
    } else {
      it->kinds.push_back(identity.kind);
    }
  }
  std::vector<std::string> custom;
  for (const auto& c : capture.custom) {
    if (c.files > 0) {
      custom.push_back(c.name);
    }
  }
  if (!custom.empty()) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const SliceGroup& g) { return g.requirements == custom_requirements; });
    if (it == groups.end()) {
      const bool names_frameworks =
        std::any_of(custom_requirements.begin(), custom_requirements.end(),
                    [](const bundle::Requirement& r) { return r.key.starts_with(prop::framework_prefix); });
      groups.push_back(SliceGroup{{}, std::move(custom), custom_requirements,
                                  names_frameworks ? site_packages : std::vector<std::string>{}});
    } else {
      it->custom_caches = std::move(custom);
    }
  }
  return groups;
}

std::string
CommandJobResult::report() const
{
  std::string text = fmt::format("job {}: {} in {:.2f} s: {}\n", job_id, quote_argv(argv),
                                 std::chrono::duration<double>(run.duration).count(),
                                 run.describe(std::chrono::duration_cast<std::chrono::milliseconds>(timeout)));
  if (!succeeded()) {
    text += fmt::format("  failed: nothing of this job is packaged; full log: {}\n", log_file.string());
    text += "  last output:\n";
    std::string_view tail = run.output_tail;
    // Show whole lines: drop a partial first line when the tail was cut.
    if (const auto nl = tail.find('\n'); tail.size() >= 4096 && nl != std::string_view::npos) {
      tail.remove_prefix(nl + 1);
    }
    std::size_t start = 0;
    while (start < tail.size()) {
      auto end = tail.find('\n', start);
      if (end == std::string_view::npos) {
        end = tail.size();
      }
      text += fmt::format("  | {}\n", tail.substr(start, end - start));
      start = end + 1;
    }
  } else {
    for (const auto& k : capture.kinds) {
      text += fmt::format("  {:<9} {:>6} files {:>11}", to_string(k.kind), k.files, human_bytes(k.bytes));
      if (k.bookkeeping_removed > 0) {
        text += fmt::format("  ({} bookkeeping entries removed)", k.bookkeeping_removed);
      }
      text += '\n';
    }
    for (const auto& c : capture.custom) {
      text += fmt::format("  custom {} (${}) {:>6} files {:>11}\n", c.name, c.variable, c.files, human_bytes(c.bytes));
    }
    for (const auto& identity : identities) {
      text += fmt::format("  {} made for: {}\n", to_string(identity.kind), requirement_text(identity.requirements));
    }
    if (hit_proof) {
      text += fmt::format("  hit proof: {} (in {:.2f} s)\n", hit_proof->line(),
                          std::chrono::duration<double>(hit_proof->run.duration).count());
    }
  }
  for (const auto& w : warnings) {
    text += fmt::format("  warning: {}\n", w);
  }
  return text;
}

namespace {
Result<CommandJobResult> run_command_job_timed(const CommandJobRequest& request);
}

Result<CommandJobResult>
run_command_job(const CommandJobRequest& request)
{
  const auto started = std::chrono::steady_clock::now();
  auto result = run_command_job_timed(request);
  if (result) {
    result->total_duration = std::chrono::steady_clock::now() - started;
  }
  return result;
}

namespace {

// The kinds a workload captures: those it names, or every kind whose
// builder row is not opt-in when it names none (and does not ask for custom
// caches only).
std::pair<std::vector<CacheKind>, KindSelection>
kinds_to_capture(const CommandWorkload& workload)
{
  std::vector<CacheKind> kinds = workload.kinds;
  const bool all_known = kinds.empty() && !workload.no_builtin_kinds;
  const auto selection = all_known ? KindSelection::all_known : KindSelection::named;
  if (all_known) {
    for (const auto kind : bundle::all_cache_kinds()) {
      if (builder_rules_of(kind).default_capture == DefaultCapture::included) {
        kinds.push_back(kind);
      }
    }
  }
  return {std::move(kinds), selection};
}

// The requirements of each filled kind (and of the custom caches), from the
// facts the kinds' rows need: NVIDIA GPUs, OpenCL devices, frameworks.
void
identify_capture(const CommandJobRequest& request, const std::vector<CacheKind>& kinds, IdentityFacts facts,
                 CommandJobResult& result)
{
  const auto& workload = request.workload;
  const auto needed = facts_needed(kinds);
  if (needs(needed, HostFacts::nvidia_gpus)) {
    facts.nvidia_gpus = request.list_nvidia_gpus ? request.list_nvidia_gpus() : probe_nvidia_gpus();
  }
  const bool wants_opencl =
    custom_caches_need_opencl_device(workload.custom_caches) || needs(needed, HostFacts::opencl_devices);
  if (wants_opencl && request.list_opencl_devices) {
    facts.opencl_devices = request.list_opencl_devices();
  }
  for (const auto& k : result.capture.kinds) {
    if (k.files == 0) {
      continue;
    }
    auto identity = identify_kind(k.kind, facts, request.frameworks);
    result.warnings.insert(result.warnings.end(), identity.warnings.begin(), identity.warnings.end());
    result.identities.push_back(std::move(identity));
  }
  std::vector<CustomCacheRequest> filled;
  for (const auto& cache : workload.custom_caches) {
    if (std::any_of(result.capture.custom.begin(), result.capture.custom.end(),
                    [&](const CustomCapture& c) { return c.name == cache.name && c.files > 0; })) {
      filled.push_back(cache);
    }
  }
  if (!filled.empty()) {
    facts.cpu = host::probe_cpu();
    result.custom_requirements = custom_cache_requirements(filled, facts, result.warnings);
  }
}

// The proof run's writes at the capture's own paths, by kind: "inductor:
// ab/x.best_config" under the staging root, "home: .cache/x" under the
// private home.
std::vector<WrittenIntoCapture>
written_into_capture(const std::vector<std::filesystem::path>& files, const std::filesystem::path& staging_root,
                     const std::filesystem::path& private_home)
{
  std::vector<WrittenIntoCapture> out;
  for (const auto& file : files) {
    auto relative = file.lexically_relative(staging_root);
    std::string kind;
    if (!relative.empty() && *relative.begin() != "..") {
      kind = relative.begin()->string();
      if (kind == bundle::k_custom_kind && std::next(relative.begin()) != relative.end()) {
        kind += "/" + std::next(relative.begin())->string();
      }
    } else {
      kind = "home";
      relative = file.lexically_relative(private_home);
    }
    auto it = std::find_if(out.begin(), out.end(), [&](const WrittenIntoCapture& w) { return w.kind == kind; });
    if (it == out.end()) {
      it = out.insert(out.end(), WrittenIntoCapture{kind, {}});
    }
    it->files.push_back(file.string());
  }
  return out;
}

// The hit proof: the program run again on a copy of the capture, out of
// reach of the capture itself (hit_proof.hpp); what it found becomes
// warnings of the job.
Status
prove_capture(const CommandJobRequest& request, const SubprocessSpec& spec, const Environment& base,
              const CacheCapture& capture, CaptureRootClaim* claim, CommandJobResult& result)
{
  HitProofRequest proof;
  proof.job_id = request.job_id;
  proof.run = spec;
  proof.run.log_file = result.hit_proof_log = request.work_dir / "hit-proof.log";
  proof.base_environment = base;
  PW_ASSIGN_CTX(auto out_of_reach, fmt::format("job {}: hit proof", request.job_id),
                CaptureOutOfReach::hide(request.work_dir, {capture.staging_root(), capture.private_home()}));
  proof.captured_root = out_of_reach.hidden_path(capture.staging_root());
  proof.kinds = capture.kinds();
  proof.custom_caches = request.workload.custom_caches;
  proof.work_dir = request.work_dir / "hit-proof";
  proof.home = request.home;
  // At the capture root, the program saw the path the application will
  // see: only the private home is a build-time path then.
  proof.install_root = claim ? claim->path() : std::filesystem::path();
  proof.capture_paths = {capture.staging_root().string(), capture.private_home().string()};
  std::error_code ec;
  std::filesystem::create_directory(proof.work_dir, ec);
  log::verbose("job {}: hit proof: running it again on a copy of the capture", request.job_id);
  PW_ASSIGN(result.hit_proof, prove_hits(proof));
  PW_TRY_CTX(fmt::format("job {}: hit proof", request.job_id), out_of_reach.restore());
  result.hit_proof->written_into_capture =
    written_into_capture(out_of_reach.written_into_capture(), capture.staging_root(), capture.private_home());
  for (const auto& written : result.hit_proof->written_into_capture) {
    result.hit_proof->causes.push_back(written_into_capture_cause(written));
  }
  // The copy has served its purpose; the log stays beside the capture's.
  PW_TRY(remove_tree(proof.work_dir));
  if (claim) {
    PW_TRY_CTX(fmt::format("job {}: hit proof", request.job_id), claim->empty_again());
  }
  const auto& hp = *result.hit_proof;
  if (!hp.run.succeeded()) {
    result.warnings.push_back(
      fmt::format("hit proof: the second run {} (log: {})", hp.run.describe(), result.hit_proof_log.string()));
  }
  for (const auto& miss : hp.misses()) {
    result.warnings.push_back(fmt::format("hit proof: {} missed: {}", request.job_id, miss));
  }
  for (const auto& cause : hp.causes) {
    result.warnings.push_back(fmt::format("hit proof: {}", cause));
  }
  for (const auto& cache : hp.uncaptured) {
    result.warnings.push_back(
      fmt::format("hit proof: the run filled {}, a cache no selected kind captures: the application will compile it "
                  "again (declare it as an extra cache of the model)",
                  cache));
  }
  return {};
}

// A command this job can run: some argv, and a shell command as one string.
Status
check_argv(const CommandJobRequest& request)
{
  const auto& workload = request.workload;
  if (workload.argv.empty()) {
    return fail(Errc::usage, fmt::format("job {}: the command has an empty argv", request.job_id));
  }
  if (workload.shell == ShellMode::via_shell && workload.argv.size() != 1) {
    // One string for `sh -c`; more would silently become $0, $1...
    return fail(Errc::usage, fmt::format("job {}: a shell command is one string, got {} argv elements", request.job_id,
                                         workload.argv.size()));
  }
  return {};
}

// The frameworks the capture's identity names, when its kinds or its custom
// caches need them and the command is a Python program started directly.
IdentityFacts
frameworks_before_run(const CommandWorkload& workload, const CacheCapture& capture, const Environment& child_env,
                      const std::filesystem::path& working_directory, CommandJobResult& result)
{
  IdentityFacts facts;
  const bool wants_frameworks = needs(facts_needed(capture.kinds()), HostFacts::frameworks);
  // A custom cache made on the CPU requires its framework's version.
  const bool custom_wants_frameworks = !workload.custom_caches.empty();
  if ((wants_frameworks || custom_wants_frameworks) && workload.shell == ShellMode::direct &&
      looks_like_python(result.argv)) {
    // Before the run: the probe imports the frameworks but compiles nothing,
    // and anything it might write lands in staging before it is measured.
    auto probed = probe_frameworks(result.argv.front(), child_env, working_directory, result.warnings);
    facts.frameworks = std::move(probed.versions);
    result.frameworks = facts.frameworks;
    result.site_packages = std::move(probed.site_packages);
  }
  return facts;
}

Result<CommandJobResult>
run_command_job_timed(const CommandJobRequest& request)
{
  const auto& workload = request.workload;
  PW_TRY(check_argv(request));
  CommandJobResult result;
  result.job_id = request.job_id;
  result.timeout = workload.timeout;
  for (const auto& word : workload.argv) {
    result.argv.push_back(expand_template(word, request.precision));
  }

  const auto [kinds, selection] = kinds_to_capture(workload);
  // Held until this function returns, however it returns: PATH is then as
  // it was found (capture_root.hpp).
  std::optional<CaptureRootClaim> claim;
  if (!request.capture_root.empty()) {
    PW_ASSIGN_CTX(auto claimed, fmt::format("job {}", request.job_id), CaptureRootClaim::claim(request.capture_root));
    claim.emplace(std::move(claimed));
  }
  PW_ASSIGN(auto capture, CacheCapture::prepare(request.work_dir, kinds,
                                                CaptureOptions{request.home, selection, workload.custom_caches,
                                                               claim ? claim->path() : std::filesystem::path()}));
  result.staging_root = capture.staging_root();
  result.log_file = request.log_file.empty() ? request.work_dir / "command.log" : request.log_file;

  Environment base = inherited_environment();
  for (const auto& [name, value] : workload.environment) {
    base[name] = expand_template(value, request.precision);
  }
  auto traps = environment_traps(base, capture.kinds());
  for (auto& replaced : replaced_cache_flags(base, workload.custom_caches)) {
    traps.push_back(std::move(replaced));
  }
  for (auto& trap : traps) {
    log::warn("job {}: {}", request.job_id, trap);
    result.warnings.push_back(std::move(trap));
  }
  const Environment child_env = capture.child_environment(base);
  const std::filesystem::path working_directory =
    workload.working_directory.empty()
      ? std::filesystem::path()
      : std::filesystem::path(expand_template(workload.working_directory.string(), request.precision));

  IdentityFacts facts = frameworks_before_run(workload, capture, child_env, working_directory, result);

  SubprocessSpec spec;
  spec.argv = result.argv;
  spec.shell = workload.shell;
  spec.working_directory = working_directory;
  spec.environment = child_env;
  spec.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(workload.timeout);
  spec.log_file = result.log_file;
  log::verbose("job {}: running {} (caches: {})", request.job_id, quote_argv(result.argv),
               capture.staging_root().string());
  PW_ASSIGN_CTX(result.run, fmt::format("job {}", request.job_id), run_subprocess(spec));

  if (claim) {
    // Out of the install root into the work directory, where every capture
    // lies; the root is empty again for the hit proof.
    PW_TRY_CTX(fmt::format("job {}", request.job_id), capture.move_staging(request.work_dir / "staging"));
    PW_TRY_CTX(fmt::format("job {}", request.job_id), claim->empty_again());
    result.staging_root = capture.staging_root();
  }
  if (!result.succeeded()) {
    // Whatever a failed warm-up wrote may be half a cache: never package it.
    PW_TRY(remove_tree(capture.staging_root()));
    return result;
  }

  PW_ASSIGN(result.capture, capture.collect());
  result.warnings.insert(result.warnings.end(), result.capture.warnings.begin(), result.capture.warnings.end());
  if (!result.capture.refusals.empty()) {
    return result; // packing_failure(): no proof of what cannot ship
  }

  identify_capture(request, capture.kinds(), std::move(facts), result);

  result.verify = workload.verify;
  const bool custom_filled = std::any_of(result.capture.custom.begin(), result.capture.custom.end(),
                                         [](const CustomCapture& c) { return c.files > 0; });
  if (workload.verify != VerifyMode::off && (result.capture.total_files() > 0 || custom_filled)) {
    PW_TRY(prove_capture(request, spec, base, capture, claim ? &*claim : nullptr, result));
  }
  return result;
}

} // namespace

} // namespace prewarm::command
