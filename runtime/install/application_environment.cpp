// SPDX-License-Identifier: Apache-2.0
#include "install/application_environment.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/custom_cache.hpp"
#include "bundle/runtime_variable.hpp"
#include "install/install_layout.hpp"
#include "install/install_records.hpp"
#include "install/installed_version.hpp"
#include "install/opencl_layer_environment.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

namespace prewarm::install {

namespace {

namespace fs = std::filesystem;

// Custom caches and env lines of the installed slices, from the manifest
// copy the installer verified. The root is not signed, so every name is
// checked again against this runtime's rules.
struct SliceExtras
{
  std::vector<bundle::CustomCache> caches;
  std::map<std::string, std::string> environment;
};

SliceExtras
installed_extras(const InstalledVersion& version, std::vector<std::string>& warnings)
{
  const auto& root = version.root;
  const auto& marker = version.marker;
  SliceExtras extras;
  auto bytes = read_file(version.manifest_path().string());
  if (!bytes) {
    warnings.push_back(fmt::format("cannot read the installed manifest ({}): custom caches and runtime env are not "
                                   "exported",
                                   bytes.error().message()));
    return extras;
  }
  if (!bundle::may_hold_caches_or_environment(*bytes)) {
    return extras; // nothing to export: not worth a full parse (most of env's and exec's time for a large bundle)
  }
  auto manifest = bundle::parse(*bytes);
  if (!manifest) {
    warnings.push_back(fmt::format("the installed manifest under {} does not parse ({}): custom caches and runtime env "
                                   "are not exported",
                                   root.string(), manifest.error().describe()));
    return extras;
  }
  std::map<std::string, bundle::CustomCache> cache_by_name;
  std::set<std::string> conflicting;
  for (const auto& slice : manifest->slices) {
    if (std::find(marker.slice_ids.begin(), marker.slice_ids.end(), slice.id) == marker.slice_ids.end()) {
      continue;
    }
    for (const auto& cache : slice.caches) {
      const auto [it, inserted] = cache_by_name.emplace(cache.name, cache);
      if (inserted) {
        extras.caches.push_back(cache);
      } else if (it->second != cache) {
        conflicting.insert(cache.name);
      }
    }
    for (const auto& setting : slice.environment) {
      const auto [it, inserted] = extras.environment.emplace(setting.name, setting.value);
      if (!inserted && it->second != setting.value) {
        warnings.push_back(fmt::format("{} left unset: installed slices set it to {} and {}", setting.name,
                                       in_quotes(it->second), in_quotes(setting.value)));
        it->second.clear();
      }
    }
  }
  std::erase_if(extras.caches, [&](const bundle::CustomCache& c) {
    if (conflicting.contains(c.name)) {
      warnings.push_back(fmt::format("custom cache {} not exported: installed slices locate it with different "
                                     "variables or flags",
                                     c.name));
      return true;
    }
    return false;
  });
  std::erase_if(extras.environment, [](const auto& entry) { return entry.second.empty(); });
  return extras;
}

} // namespace

// What the trust policy allowed beyond the allow list when this version was
// installed (install_layout.hpp: VERSION/.environment). A name that is not a
// variable name is ignored; the deny list still applies to every name.
std::set<std::string, std::less<>>
policy_environment(const InstalledVersion& version)
{
  std::set<std::string, std::less<>> names;
  if (version.legacy()) {
    return names;
  }
  auto text = read_file((version.dir / k_version_environment_file).string(), 1 << 20);
  if (!text) {
    return names;
  }
  std::string_view rest = *text;
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const auto line = rest.substr(0, end);
    if (bundle::is_variable_name(line)) {
      names.emplace(line);
    }
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  return names;
}

// The signed files of the installed slices, parsed from the version's
// manifest copy once, and only when a private copy needs them.
class SignedFiles
{
public:
  explicit SignedFiles(const InstalledVersion& version) : m_version(version) {}
  Result<const SignedFileList*> get()
  {
    if (!m_loaded) {
      m_loaded = true;
      m_list = load();
    }
    if (!m_list) {
      return fail(m_list.error());
    }
    return &*m_list;
  }

private:
  Result<SignedFileList> load() const
  {
    PW_ASSIGN(const auto bytes, read_file(m_version.manifest_path().string()));
    if (sha256_hex(bytes) != m_version.marker.manifest_sha256) {
      return fail(Errc::failed,
                  fmt::format("the manifest copy {} is not the installed manifest (its digest differs from the "
                              "marker's)",
                              in_quotes(m_version.manifest_path().string())),
                  "E_CACHE_UNUSABLE");
    }
    PW_ASSIGN(const auto manifest, bundle::parse(bytes));
    SignedFileList list;
    for (const auto& slice : manifest.slices) {
      if (std::find(m_version.marker.slice_ids.begin(), m_version.marker.slice_ids.end(), slice.id) ==
          m_version.marker.slice_ids.end()) {
        continue;
      }
      for (const auto& file : slice.files) {
        list.files.emplace(file.path, file);
      }
      list.directories.insert(list.directories.end(), slice.directories.begin(), slice.directories.end());
      list.links.insert(list.links.end(), slice.links.begin(), slice.links.end());
    }
    return list;
  }

  const InstalledVersion& m_version;
  bool m_loaded = false;
  Result<SignedFileList> m_list = SignedFileList{};
};

namespace {

// Killed between two kinds' swaps: some kinds may be the new bundle's and
// some the old one's, and the marker names only one of them.
Status
check_no_interrupted_install(const fs::path& root)
{
  if (struct stat st{}; ::lstat((meta_dir(root) / k_committing_file).c_str(), &st) == 0) {
    return fail(Errc::failed,
                fmt::format("an install under {} was interrupted while swapping caches in; they may mix two "
                            "bundles, so none is exported (the next install repairs it)",
                            in_quotes(root.string())),
                "E_INTERRUPTED");
  }
  return {};
}

// The allow list's rule for a custom cache: its variable, or its
// variable's flag (bundle/runtime_variable.hpp).
Status
check_cache_variable(const bundle::CustomCache& cache, const std::set<std::string, std::less<>>& policy_allowed)
{
  if (cache.flag) {
    return bundle::check_allowed_variable(cache.variable, cache.flag->key, bundle::VariableRole::cache_flag,
                                          policy_allowed);
  }
  return bundle::check_allowed_variable(cache.variable, "", bundle::VariableRole::cache_location, policy_allowed);
}

std::string
names_of(const std::vector<bundle::EnvSetting>& settings)
{
  std::string names;
  for (const auto& s : settings) {
    names += names.empty() ? "" : ", ";
    names += s.name;
  }
  return names;
}

// What the steps of application_environment() share: the installed version,
// how this user reaches its caches, and the environment being filled.
struct VersionExport
{
  const fs::path& root;
  const InstalledVersion& version;
  const InstalledCaches& caches;
  const UserAccessOptions& access;
  ExportedPaths paths;
  ApplicationEnvironment& out;

  // The directory this user's application uses for ROOT/<relative>, or none
  // (with the warning naming the variables left unset).
  std::optional<fs::path> usable_dir(std::string_view relative, std::string_view variables)
  {
    auto usable = usable_cache(caches, relative, access);
    if (!usable) {
      out.warnings.push_back(fmt::format("{}: {} left unset, the application compiles these kernels as without "
                                         "prewarm: {}",
                                         relative, variables, usable.error().message()));
      return std::nullopt;
    }
    if (usable->copied_now) {
      out.notes.push_back(fmt::format("{}: {} is not writable by uid {}; using a private copy {} ({} files in {:.3f} s)",
                                      relative, (version.dir / std::string(relative)).string(), ::geteuid(),
                                      usable->dir.string(), usable->files_copied, usable->copy_seconds));
    }
    if (usable->files_refused > 0) {
      out.warnings.push_back(fmt::format("{}: {} installed file(s) left out of the private copy, not as signed (first: "
                                         "{}); the application compiles those kernels itself",
                                         relative, usable->files_refused, usable->refusal));
    }
    if (usable->hold) {
      out.held.push_back(std::move(usable->hold));
    }
    if (usable->use == CacheUse::in_place && paths == ExportedPaths::root_links && !version.legacy()) {
      out.directories[std::string(relative)] = root / std::string(relative);
      return root / std::string(relative);
    }
    out.directories[std::string(relative)] = usable->dir;
    return usable->dir;
  }

  // The variables of each installed kind (and the layer's, for programs).
  // Returns whether custom caches are installed (exported by the next step).
  Result<bool> export_kinds()
  {
    bool has_custom = false;
    for (const auto& installed : version.marker.kinds) {
      if (installed.kind == bundle::k_custom_kind) {
        has_custom = true;
        continue;
      }
      PW_ASSIGN_CTX(const auto kind, fmt::format("install marker under {}", root.string()),
                    bundle::parse_cache_kind(installed.kind));
      const auto& rules = bundle::rules_of(kind);
      if (rules.directory_must_exist) {
        std::error_code ec;
        fs::create_directories(version.dir / installed.kind, ec); // see the header
      }
      const auto names = names_of(bundle::cache_environment(kind, root, 0));
      const auto dir = usable_dir(installed.kind, names);
      if (!dir) {
        continue;
      }
      auto vars = bundle::cache_environment(kind, *dir, installed.bytes);
      out.settings.insert(out.settings.end(), vars.begin(), vars.end());
      for (auto& setting : bundle::installed_environment(kind)) {
        if (std::ranges::none_of(out.settings, [&](const bundle::EnvSetting& s) { return s == setting; })) {
          out.settings.push_back(std::move(setting));
        }
      }
      if (rules.served_by_opencl_layer) {
        auto layer = opencl_layer_environment(*dir);
        out.settings.insert(out.settings.end(), layer.begin(), layer.end());
      }
    }
    return has_custom;
  }

  // A cache whose directory is a flag: KEY=DIR merged into the value this
  // process (the application's environment) has, its own KEY=... replaced.
  void export_cache_flag(const bundle::CustomCache& cache, const fs::path& dir)
  {
    out.merges_caller_values = true;
    const char* own = std::getenv(cache.variable.c_str());
    auto merged = bundle::merge_cache_flag(own != nullptr ? own : "", *cache.flag, dir.string());
    if (!merged) {
      out.warnings.push_back(fmt::format("custom cache {}: {} left as it is, the application compiles as without "
                                         "prewarm: {}",
                                         cache.name, cache.variable, merged.error().message()));
      return;
    }
    for (const auto& replaced : merged->replaced) {
      out.warnings.push_back(fmt::format("custom cache {}: the application's {} held {}, replaced by the installed "
                                         "cache's {}={} (prewarm's directory wins; leave {} out of {} to keep this "
                                         "quiet)",
                                         cache.name, cache.variable, replaced, cache.flag->key, dir.string(),
                                         cache.flag->key, cache.variable));
    }
    out.settings.push_back({cache.variable, std::move(merged->value)});
  }

  // Each custom cache's variable, where this runtime's rules and the
  // version's policy allow it.
  void export_custom_caches(const std::vector<bundle::CustomCache>& custom_caches,
                            const std::set<std::string, std::less<>>& policy_allowed, bool has_custom)
  {
    for (const auto& cache : custom_caches) {
      if (auto checked = bundle::check_custom_cache(cache); !checked) {
        out.warnings.push_back(fmt::format("custom cache {} refused: {}", cache.name, checked.error().describe()));
        continue;
      }
      if (auto allowed = check_cache_variable(cache, policy_allowed); !allowed) {
        out.warnings.push_back(fmt::format("custom cache {} refused: {}", cache.name, allowed.error().describe()));
        continue;
      }
      if (!has_custom) {
        out.warnings.push_back(fmt::format("custom cache {}: {} is not installed; {} left unset", cache.name,
                                           bundle::k_custom_kind, cache.variable));
        continue;
      }
      const auto dir = usable_dir(fmt::format("{}/{}", bundle::k_custom_kind, cache.name), cache.variable);
      if (dir && cache.flag) {
        export_cache_flag(cache, *dir);
      } else if (dir) {
        out.settings.push_back({cache.variable, dir->string()});
      }
    }
  }

  // The slices' runtime env lines, where this runtime's rules and the
  // version's policy allow them.
  void export_runtime_env(const std::map<std::string, std::string>& environment,
                          const std::set<std::string, std::less<>>& policy_allowed)
  {
    for (const auto& [name, value] : environment) {
      if (auto checked = bundle::check_exported_variable(name); !checked) {
        out.warnings.push_back(fmt::format("runtime env {} refused: {}", name, checked.error().describe()));
        continue;
      }
      if (!bundle::is_variable_value(value)) {
        out.warnings.push_back(fmt::format("runtime env {} refused: its value is not printable ASCII", name));
        continue;
      }
      if (auto allowed = bundle::check_allowed_variable(name, value, bundle::VariableRole::runtime_env, policy_allowed);
          !allowed) {
        out.warnings.push_back(fmt::format("runtime env {} refused: {}", name, allowed.error().describe()));
        continue;
      }
      out.settings.push_back({name, value});
    }
  }
};

// Sorted, one value per variable: a custom cache variable that a runtime env
// line of another slice also sets is ambiguous, and left unset.
void
drop_ambiguous_settings(ApplicationEnvironment& out)
{
  std::sort(out.settings.begin(), out.settings.end());
  for (std::size_t i = 1; i < out.settings.size();) {
    if (out.settings[i].name == out.settings[i - 1].name) {
      out.warnings.push_back(fmt::format("{} left unset: the installed slices give it two values",
                                         out.settings[i].name));
      const auto name = out.settings[i].name;
      std::erase_if(out.settings, [&](const bundle::EnvSetting& s) { return s.name == name; });
      i = 1;
      continue;
    }
    ++i;
  }
}

} // namespace

Result<ApplicationEnvironment>
application_environment(const fs::path& root_in, const UserAccessOptions& access, VersionHold hold,
                        ExportedPaths paths)
{
  std::error_code ec;
  const auto root = fs::absolute(root_in, ec).lexically_normal();
  PW_TRY(check_no_interrupted_install(root));
  PW_ASSIGN(auto opened, open_installed_version(root, hold));
  if (!opened) {
    return fail(Errc::failed, fmt::format("nothing is installed under {} (no {}/{})", in_quotes(root.string()),
                                          k_meta_dir, k_marker_file),
                "E_NOT_INSTALLED");
  }
  const InstalledVersion& version = *opened;
  ApplicationEnvironment out;
  out.version_dir = version.dir;
  out.version = version.marker.version;
  out.marker = version.marker;
  SignedFiles signed_files(version);
  const InstalledCaches caches{version.dir,
                               version.legacy() ? version.marker.manifest_sha256.substr(0, 16) : version.marker.version,
                               [&]() { return signed_files.get(); }};
  VersionExport step{root, version, caches, access, paths, out};

  PW_ASSIGN(const bool has_custom, step.export_kinds());
  const auto extras = installed_extras(version, out.warnings);
  const auto policy_allowed = policy_environment(version);
  step.export_custom_caches(extras.caches, policy_allowed, has_custom);
  step.export_runtime_env(extras.environment, policy_allowed);
  out.settings.push_back({std::string(k_root_variable), root.string()});
  if (hold == VersionHold::shared && !version.legacy()) {
    out.held.push_back(std::move(opened->dir_fd));
  }
  drop_ambiguous_settings(out);
  return out;
}

Result<ApplicationEnvironment>
environment(const fs::path& root, VersionHold hold, ExportedPaths paths)
{
  PW_ASSIGN(auto env, application_environment(root, {}, hold, paths));
  for (const auto& note : env.notes) {
    log::info("{}", note);
  }
  for (const auto& warning : env.warnings) {
    log::warn("{}", warning);
  }
  return env;
}

std::vector<std::string>
refused_variables(const bundle::Slice& slice, const std::set<std::string, std::less<>>& policy_allowed)
{
  std::vector<std::string> refused;
  for (const auto& cache : slice.caches) {
    if (auto allowed = check_cache_variable(cache, policy_allowed); !allowed) {
      refused.push_back(fmt::format("slice {}: custom cache {} will not be exported: {}", slice.id, cache.name,
                                    allowed.error().describe()));
    }
  }
  for (const auto& setting : slice.environment) {
    if (auto allowed = bundle::check_allowed_variable(setting.name, setting.value, bundle::VariableRole::runtime_env,
                                                      policy_allowed);
        !allowed) {
      refused.push_back(fmt::format("slice {}: runtime env will not be exported: {}", slice.id,
                                    allowed.error().describe()));
    }
  }
  return refused;
}

std::string
format_shell_exports(const std::vector<bundle::EnvSetting>& settings)
{
  std::string out;
  for (const auto& s : settings) {
    out += shell_export_line(s.name, s.value);
  }
  return out;
}

} // namespace prewarm::install
