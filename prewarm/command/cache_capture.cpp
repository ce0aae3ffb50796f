// SPDX-License-Identifier: Apache-2.0
#include "command/cache_capture.hpp"

#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "command/capture_root.hpp"
#include "command/kind_builder_rules.hpp"
#include "command/precompile_hook.hpp"
#include "install/opencl_layer_environment.hpp"
#include "jobs/staged_output.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <system_error>

namespace prewarm::command {

namespace fs = std::filesystem;

namespace {

// Beside the capture's private home (inside it, the leak check would take it
// for a cache): never packaged, gone with the work dir.
constexpr std::string_view k_precompile_hook_dir = "precompile-hook";

std::string
error_text(const std::error_code& ec)
{
  return ec.message();
}

// Moves every regular file of `source` into the same relative place under
// `target` unless one is there already (what the program wrote through the
// variable wins over what it wrote to a default location). Both trees are
// under the capture's work directory, so rename() never crosses devices.
Result<std::uint64_t>
fold_tree_into(const fs::path& source, const fs::path& target)
{
  std::uint64_t moved = 0;
  std::error_code ec;
  std::vector<fs::path> files;
  const auto walked = for_each_entry(source, [&](const TreeEntry& entry) -> Result<WalkNext> {
    if (entry.is_regular_file()) {
      files.push_back(source / entry.relative);
    }
    return WalkNext::descend;
  });
  if (!walked) {
    return fail(Errc::failed, fmt::format("cannot read {}: {}", in_quotes(source.string()), walked.error().message()));
  }
  for (const auto& file : files) {
    const auto destination = target / file.lexically_relative(source);
    if (fs::exists(fs::symlink_status(destination, ec))) {
      continue;
    }
    fs::create_directories(destination.parent_path(), ec);
    if (ec) {
      return fail(Errc::failed, fmt::format("cannot create {}: {}",
                                            in_quotes(destination.parent_path().string()), error_text(ec)));
    }
    if (::rename(file.c_str(), destination.c_str()) != 0) {
      return fail(Errc::failed, fmt::format("cannot move {} to {}: {}", in_quotes(file.string()),
                                            in_quotes(destination.string()), errno_message(errno)));
    }
    ++moved;
  }
  return moved;
}


std::string
kind_list(std::span<const CacheKind> kinds)
{
  std::string text;
  for (const auto kind : kinds) {
    if (!text.empty()) {
      text += ", ";
    }
    text += to_string(kind);
  }
  return text;
}

bool
selected(std::span<const CacheKind> kinds, CacheKind kind)
{
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

bool
is_real_directory(const fs::path& path)
{
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(path, ec));
}

} // namespace

std::uint64_t
CaptureSummary::total_files() const
{
  std::uint64_t total = 0;
  for (const auto& k : kinds) {
    total += k.files;
  }
  return total;
}

std::uint64_t
CaptureSummary::total_bytes() const
{
  std::uint64_t total = 0;
  for (const auto& k : kinds) {
    total += k.bytes;
  }
  return total;
}

const KindCapture*
CaptureSummary::find(CacheKind kind) const
{
  for (const auto& k : kinds) {
    if (k.kind == kind) {
      return &k;
    }
  }
  return nullptr;
}

std::vector<std::string>
environment_traps(const Environment& environment, std::span<const CacheKind> kinds)
{
  std::vector<std::string> traps;
  auto value_of = [&](std::string_view name) -> const std::string* {
    const auto it = environment.find(name);
    return it == environment.end() ? nullptr : &it->second;
  };

  // Variables the redirection sets anyway: say so, the value in the
  // environment does not apply to the capture.
  for (const auto kind : kinds) {
    for (const auto& setting : bundle::cache_environment(kind, "/staging", 0)) {
      if (const auto* old = value_of(setting.name); old != nullptr) {
        traps.push_back(fmt::format("{}={} is overridden for the capture of {}", setting.name,
                                    in_quotes(*old), to_string(kind)));
      }
    }
  }
  for (const auto kind : bundle::all_cache_kinds()) {
    if (const auto& rules = builder_rules_of(kind); selected(kinds, kind) && rules.traps != nullptr) {
      rules.traps(environment, kind, traps);
    }
  }
  return traps;
}

Result<CacheCapture>
CacheCapture::prepare(const fs::path& work_dir, std::vector<CacheKind> kinds, CaptureOptions options)
{
  if (kinds.empty() && options.custom_caches.empty()) {
    return fail(Errc::usage, "no cache kinds and no custom caches selected for the capture");
  }
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  const auto staging_root = options.staging_root.empty() ? work_dir / "staging" : options.staging_root;
  const auto home = work_dir / "home";
  std::error_code ec;
  if (!options.staging_root.empty() && !is_real_directory(staging_root)) {
    return fail(Errc::failed, fmt::format("capture directory {} does not exist", in_quotes(staging_root.string())));
  }
  for (const auto& dir : options.staging_root.empty() ? std::vector<fs::path>{staging_root, home, home / ".cache"}
                                                      : std::vector<fs::path>{home, home / ".cache"}) {
    if (!fs::create_directory(dir, ec) || ec) {
      return fail(Errc::failed, fmt::format("cannot create capture directory {}: {}", in_quotes(dir.string()),
                                            ec ? error_text(ec) : "it exists already"));
    }
  }
  PW_TRY(jobs::create_staged_kinds(staging_root, kinds, jobs::ExistingKindDirectory::refuse));
  PW_TRY(prepare_custom_staging(staging_root, options.custom_caches));
  if (sets_up(kinds, CaptureSets::torch_capture_hook) && options.dynamo_save == DynamoSave::at_exit) {
    PW_TRY(write_precompile_hook(home.parent_path() / k_precompile_hook_dir));
  }
  return CacheCapture(staging_root, home, std::move(kinds), std::move(options));
}

Status
CacheCapture::move_staging(const fs::path& to)
{
  std::error_code ec;
  if (!fs::create_directory(to, ec) || ec) {
    return fail(Errc::failed, fmt::format("cannot create staging directory {}: {}", in_quotes(to.string()),
                                          ec ? error_text(ec) : "it exists already"));
  }
  std::vector<fs::path> moved;
  for (const auto kind : m_kinds) {
    moved.emplace_back(to_string(kind));
  }
  if (!m_options.custom_caches.empty()) {
    moved.emplace_back(bundle::k_custom_kind);
  }
  for (const auto& relative : moved) {
    if (is_real_directory(m_staging_root / relative)) {
      PW_TRY(move_tree(m_staging_root / relative, to / relative));
    }
  }
  m_staging_root = to;
  return {};
}

fs::path
CacheCapture::staging_dir(CacheKind kind) const
{
  return m_staging_root / std::string(to_string(kind));
}

Environment
CacheCapture::child_environment(const Environment& base) const
{
  Environment env = base;
  if (m_options.home == HomeMode::private_home) {
    // Data that lives under the real home and is not a compiled-kernel cache:
    // keep its real location so the program still imports its packages and
    // does not download models again into a throwaway directory.
    const auto real_home_it = base.find("HOME");
    if (real_home_it != base.end() && !real_home_it->second.empty()) {
      const fs::path real_home = real_home_it->second;
      const auto real_cache = [&]() -> fs::path {
        const auto xdg = base.find("XDG_CACHE_HOME");
        return xdg != base.end() && !xdg->second.empty() ? fs::path(xdg->second) : real_home / ".cache";
      }();
      const std::array<std::pair<std::string_view, fs::path>, 4> kept = {{
        {"PYTHONUSERBASE", real_home / ".local"},   // pip --user packages
        {"PYENV_ROOT", real_home / ".pyenv"},       // pyenv shims find their pythons here
        {"HF_HOME", real_cache / "huggingface"},    // downloaded models
        {"TORCH_HOME", real_cache / "torch"},       // torch.hub weights
      }};
      for (const auto& [name, path] : kept) {
        if (env.find(name) == env.end() && is_real_directory(path)) {
          env.emplace(std::string(name), path.string());
        }
      }
    }
    env["HOME"] = m_home.string();
    env["XDG_CACHE_HOME"] = (m_home / ".cache").string();
  }
  for (const auto kind : m_kinds) {
    for (auto& setting : bundle::cache_environment(kind, staging_dir(kind), 0)) {
      env[setting.name] = std::move(setting.value);
    }
  }
  if (sets_up(m_kinds, CaptureSets::bytecode_writing)) {
    // Set to anything non-empty it stops Python writing any bytecode, so the
    // capture would stay empty; only the capture's run drops it.
    env.erase("PYTHONDONTWRITEBYTECODE");
  }
  if (sets_up(m_kinds, CaptureSets::torch_capture_hook) && m_options.dynamo_save == DynamoSave::at_exit) {
    add_precompile_hook(env, m_home.parent_path() / k_precompile_hook_dir);
  }
  if (sets_up(m_kinds, CaptureSets::opencl_layer_recording)) {
    // The programs kind of a command workload is what the OpenCL layer
    // records while the program runs (runtime/layer).
    if (const auto layer = install::find_opencl_layer()) {
      const auto existing = env.find("OPENCL_LAYERS");
      env["OPENCL_LAYERS"] = existing != env.end() && !existing->second.empty() && existing->second != layer->string()
                               ? layer->string() + ":" + existing->second
                               : layer->string();
      env["PREWARM_LAYER"] = "record";
    } else {
      log::warn("the OpenCL layer (libprewarm_opencl_layer.so) is not installed beside prewarm: "
                "the programs kind records nothing for command workloads");
    }
  }
  // Last: a custom cache may be located by XDG_CACHE_HOME itself.
  for (const auto& problem : point_custom_variables(env, m_staging_root, m_options.custom_caches)) {
    log::warn("{}", problem);
  }
  return env;
}

Result<CaptureSummary>
CacheCapture::collect() const
{
  CaptureSummary summary;
  std::vector<CacheKind> empty_kinds;
  for (const auto kind : m_kinds) {
    KindCapture capture;
    capture.kind = kind;
    const auto staging = staging_dir(kind);
    if (!is_real_directory(staging)) {
      return fail(Errc::failed, fmt::format("staging directory {} is gone (did the program delete it?)",
                                            in_quotes(staging.string())));
    }
    const auto fallback_rel = fs::path(bundle::rules_of(kind).default_location_under_home);
    if (m_options.home == HomeMode::private_home && !fallback_rel.empty() &&
        is_real_directory(m_home / fallback_rel)) {
      PW_ASSIGN(capture.from_default_location, fold_tree_into(m_home / fallback_rel, staging));
      if (capture.from_default_location > 0) {
        summary.warnings.push_back(fmt::format(
          "{}: {} files were written to the default location ~/{} instead of the redirected "
          "directory (the program or a library resets the variable); they were captured, but the "
          "application must read them from where the installed bundle points",
          to_string(kind), capture.from_default_location, fallback_rel.string()));
      }
    }
    PW_ASSIGN(auto cleaned, clean_staged_kind(kind, staging));
    capture.bookkeeping_removed = cleaned.bookkeeping_removed;
    summary.warnings.insert(summary.warnings.end(), cleaned.warnings.begin(), cleaned.warnings.end());
    summary.refusals.insert(summary.refusals.end(), cleaned.refusals.begin(), cleaned.refusals.end());
    PW_ASSIGN(const auto stats, jobs::count_staged_files(staging));
    capture.files = stats.files;
    capture.bytes = stats.bytes;
    if (capture.files == 0) {
      empty_kinds.push_back(kind);
    }
    summary.kinds.push_back(capture);
  }
  // Caches the manifest did not ask for that still filled up in the private
  // home: worth knowing, not worth packaging unasked.
  if (m_options.home == HomeMode::private_home) {
    for (const auto kind : bundle::all_cache_kinds()) {
      const auto rel = fs::path(bundle::rules_of(kind).default_location_under_home);
      if (selected(m_kinds, kind) || rel.empty() || !is_real_directory(m_home / rel)) {
        continue;
      }
      PW_ASSIGN(const auto stats, jobs::count_staged_files(m_home / rel));
      if (stats.files > 0) {
        summary.warnings.push_back(fmt::format(
          "{}: the program filled ~/{} ({} files, {} bytes) but the workload does not select {}; "
          "not captured",
          to_string(kind), rel.string(), stats.files, stats.bytes, to_string(kind)));
      }
    }
  }
  PW_ASSIGN(summary.custom, collect_custom_caches(m_staging_root, m_options.custom_caches, summary.warnings,
                                                   summary.refusals));
  const bool custom_filled = std::any_of(summary.custom.begin(), summary.custom.end(),
                                         [](const CustomCapture& c) { return c.files > 0; });
  if (summary.total_files() == 0 && !custom_filled) {
    summary.warnings.push_back(fmt::format(
      "the command filled none of the caches expected ({}): nothing will be packaged for it (does it "
      "compile kernels on this host? is a cache switched off in its environment?)",
      kind_list(m_kinds)));
  } else if (m_options.selection == KindSelection::named && !empty_kinds.empty()) {
    summary.warnings.push_back(fmt::format("the command left {} empty although the workload names {}",
                                           kind_list(empty_kinds),
                                           empty_kinds.size() == 1 ? "it" : "them"));
  }
  return summary;
}

} // namespace prewarm::command
