// SPDX-License-Identifier: Apache-2.0
#include "install/installer.hpp"

#include "audit/file_inventory.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/signature.hpp"
#include "host/probe_host.hpp"
#include "install/application_environment.hpp"
#include "install/install_layout.hpp"
#include "install/install_lock.hpp"
#include "install/install_records.hpp"
#include "install/installed_state.hpp"
#include "install/recorded_install.hpp"
#include "install/rollback_guard.hpp"
#include "install/space_margin.hpp"
#include "install/start_record.hpp"
#include "install/version_switch.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <set>

namespace prewarm::install {

namespace {

namespace fs = std::filesystem;

// What to do about a cache root this user may not write.
std::string
permission_hint(int error_number)
{
  if (error_number == EACCES || error_number == EPERM) {
    return fmt::format(" (the cache root must be writable by this user, uid {}: choose another --root, or make it "
                       "writable, e.g. chown {} DIR in the image)",
                       ::getuid(), ::getuid());
  }
  if (error_number == EROFS) {
    return " (a read-only file system: point --root at a writable volume, e.g. an emptyDir or tmpfs)";
  }
  return {};
}

Error
io_error(std::string_view what, const fs::path& path, int error_number)
{
  return Error(Errc::failed,
               fmt::format("{} {}: {}{}", what, in_quotes(path.string()), errno_message(error_number),
                           permission_hint(error_number)),
               "E_IO");
}

// ROOT and ROOT/.prewarm, created if needed; neither may be a symlink (a
// planted link would redirect every write of the install).
Result<UniqueFd>
prepare_root(const fs::path& root)
{
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) {
    return fail(Errc::failed,
                fmt::format("cannot create the cache root {}: {}{}", in_quotes(root.string()), ec.message(),
                            permission_hint(ec.value())),
                "E_IO");
  }
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root_fd) {
    const int e = errno;
    if (e == ELOOP || e == ENOTDIR) {
      return fail(Errc::verify, fmt::format("the cache root {} is a symlink or not a directory", in_quotes(root.string())),
                  "E_TARGET_UNSAFE");
    }
    return fail(io_error("cannot open the cache root", root, e));
  }
  if (::mkdirat(root_fd.get(), std::string(k_meta_dir).c_str(), 0755) != 0 && errno != EEXIST) {
    return fail(io_error("cannot create", meta_dir(root), errno));
  }
  struct stat st{};
  if (::fstatat(root_fd.get(), std::string(k_meta_dir).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
    return fail(Errc::verify, fmt::format("{} is not a directory (a symlink?)", in_quotes(meta_dir(root).string())),
                "E_TARGET_UNSAFE");
  }
  const auto versions = fmt::format("{}/{}", k_meta_dir, k_versions_dir);
  if (::mkdirat(root_fd.get(), versions.c_str(), 0755) != 0 && errno != EEXIST) {
    return fail(io_error("cannot create", versions_dir(root), errno));
  }
  if (::fstatat(root_fd.get(), versions.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
    return fail(Errc::verify, fmt::format("{} is not a directory (a symlink?)", in_quotes(versions_dir(root).string())),
                "E_TARGET_UNSAFE");
  }
  return root_fd;
}

// Staging directories of a crashed run, and the temporary files of its
// atomic writes (".committing.tmp.XXXXXX": write_file_atomic's names). Called
// under the lock, so none of them belongs to a live installer.
void
remove_stale_staging(const fs::path& root)
{
  std::error_code ec;
  for (fs::directory_iterator it(meta_dir(root), ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.starts_with('.') && name.find(".tmp.") != std::string::npos) {
      if (::unlinkat(AT_FDCWD, it->path().c_str(), 0) != 0 && errno != ENOENT) {
        log::warn("cannot remove {}: {}", it->path().string(), errno_message(errno));
      }
      continue;
    }
    if (name.starts_with(k_staging_prefix)) {
      log::info("removing {} left by an interrupted install", it->path().string());
      if (auto removed = remove_tree(it->path()); !removed) {
        log::warn("{}", removed.error().message());
      }
    }
  }
}

// Removes the staging directory on every path out of install_bundle().
class StagingGuard
{
public:
  explicit StagingGuard(fs::path path) : m_path(std::move(path)) {}
  ~StagingGuard() { remove(); }
  void remove()
  {
    if (m_path.empty()) {
      return;
    }
    if (auto removed = remove_tree(m_path); !removed) {
      log::warn("{}", removed.error().message());
    }
    m_path.clear();
  }
  StagingGuard(const StagingGuard&) = delete;
  StagingGuard& operator=(const StagingGuard&) = delete;

private:
  fs::path m_path;
};

// The records and the switch. The new version is complete and published
// before the marker names it; the marker's rename is the switch. On a
// failure before it, the new version is removed and the old one stays current.
Status
commit_and_record(const fs::path& root, const fs::path& staging, int staging_fd, const std::string& id,
                  const std::vector<std::string>& kinds, const VerifiedBundle& verified, const InstalledMarker& marker,
                  const std::string& file_inventory, const std::set<std::string, std::less<>>& allowed_environment,
                  ChannelState state, std::vector<KindCommit>& commits)
{
  // Inside the version: a reader of the marker finds the records of the very
  // caches it names (`status --audit` counts files not in the list as new).
  PW_TRY(write_file_atomic(staging / k_version_manifest_file, verified.manifest_bytes));
  PW_TRY(write_file_atomic(staging / k_version_files_file, file_inventory));
  PW_TRY(record_environment(staging, allowed_environment));
  PW_TRY(publish_version(root, staging, staging_fd, id));
  const auto undo = [&](Error error) -> Status {
    (void)remove_tree(versions_dir(root) / id);
    return fail(std::move(error));
  };
  // Each kind still a directory of the version (a process of the installer's
  // uid may have swapped one for a link since the extraction checked it).
  for (const auto& kind : kinds) {
    struct stat st{};
    const auto path = versions_dir(root) / id / kind;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return undo(Error(Errc::verify,
                        fmt::format("{} is no longer a directory (replaced during the install?)",
                                    in_quotes(path.string())),
                        "E_TARGET_UNSAFE"));
    }
  }

  auto& mark = state[verified.manifest.channel];
  if (verified.manifest.serial >= mark.serial) {
    mark = {verified.manifest.serial, verified.manifest_sha256};
  }
  Status recorded = write_state(root, state);
  if (recorded) {
    recorded = write_marker(root, marker);
    // The rename is the commit point: a failure after it (syncing the
    // directory) leaves the new marker in place, so the new version stays
    // too; removing it would leave a marker that names what is not there.
    if (auto now_marked = read_marker(root); !recorded && now_marked && *now_marked &&
                                             serialize(**now_marked) == serialize(marker)) {
      log::warn("{} (the install is recorded; it may not survive a power loss)", recorded.error().message());
      recorded = {};
    }
  }
  if (!recorded) {
    return undo(std::move(recorded).error());
  }
  // A legacy root's note of an interrupted kind-by-kind swap: what it warned
  // about is replaced now.
  ::unlink((meta_dir(root) / k_committing_file).c_str());
  ::unlink((meta_dir(root) / k_manifest_copy_file).c_str()); // a legacy root's records
  ::unlink((meta_dir(root) / k_file_inventory_file).c_str());
  (void)fsync_directory(meta_dir(root));
  for (const auto& kind : kinds) {
    commits.push_back({kind, CommitMethod::renamed, 0, 0});
  }
  return {};
}

// The selection in the report (with what env/exec will refuse, said here,
// where the policy can still allow it); the ids selected and the space they
// need.
struct SelectionNeeds
{
  std::vector<std::string> slice_ids;
  std::uint64_t bytes = 0;
};

SelectionNeeds
report_selection(const SliceSelection& selection, const InstallOptions& options, InstallReport& report)
{
  report.skipped = selection.skipped;
  report.warnings.insert(report.warnings.end(), selection.warnings.begin(), selection.warnings.end());
  for (const auto& s : selection.selected) {
    auto refused = refused_variables(*s.slice, options.verify.policy.allowed_environment);
    report.warnings.insert(report.warnings.end(), refused.begin(), refused.end());
  }
  SelectionNeeds needs;
  for (const auto& s : selection.selected) {
    report.selected.push_back({s.slice->id, s.device});
    needs.slice_ids.push_back(s.slice->id);
    // Files plus a block per entry for directories and rounding.
    needs.bytes += s.slice->uncompressed_size + s.slice->entry_count * 4096;
  }
  return needs;
}

// After the switch: ROOT/<kind> re-pointed at version `id` (links of kinds
// only the previous version had removed), and earlier versions removed once
// no application holds them (install_layout.hpp).
void
retire_earlier_versions(const fs::path& root, const std::string& id, const std::vector<std::string>& kinds,
                        const std::vector<std::string>& previous_kinds)
{
  point_kind_links(root, id, kinds, previous_kinds);
  if (const auto held = remove_old_versions(root, id); held > 0) {
    log::info("{} earlier version(s) kept under {}: still used by running applications (removed by a later install)",
              held, versions_dir(root).string());
  }
}

// Upkeep of the version an install found current (the same bundle for this
// host): versions that applications held at the last install and have let
// go are removed, kind links restored, the environment recorded under the
// policy of now, and this host's fingerprint remembered.
void
tend_current_version(const fs::path& root, const InstalledMarker& marker, const std::string& fingerprint,
                     const std::set<std::string, std::less<>>& allowed_environment, InstallReport& report)
{
  (void)remove_old_versions(root, marker.version);
  point_kind_links(root, marker.version, kind_names(marker), {}); // a link removed, or a kill before them
  const auto version = versions_dir(root) / marker.version;
  if (!environment_recorded(version, allowed_environment)) {
    if (auto recorded = record_environment(version, allowed_environment); !recorded) {
      log::warn("{} (env/exec keep the variables the earlier policy allowed)", recorded.error().message());
    } else {
      report.environment_updated = true;
    }
  }
  if (marker.host_fingerprint != fingerprint && !fingerprint.empty()) {
    // The same slices on a host that looks different (a driver file
    // touched, or a marker from before fingerprints): remember this host,
    // so that the next start need not probe it again.
    auto remembered = marker;
    remembered.host_fingerprint = fingerprint;
    if (auto written = write_marker(root, remembered); !written) {
      log::warn("{} (the next install probes the host again)", written.error().message());
    }
  }
}

// Best effort: without its start record, exec and a repeated install take the
// full path.
void
record_start(const fs::path& root, const VerifiedBundle& verified, const bundle::ManifestPolicy& policy)
{
  if (auto written = write_start_record(root, verified, policy); !written) {
    log::verbose("start record not written ({}): exec and a repeated install work it out again",
                 written.error().message());
  }
}

// A version found in place keeps its start record; one missing or made
// under another policy is written again.
void
record_start_unless_recorded(const fs::path& root, const std::string& version, const VerifiedBundle& verified,
                             const bundle::ManifestPolicy& policy)
{
  if (!start_recorded(versions_dir(root) / version, verified.manifest_sha256, policy)) {
    record_start(root, verified, policy);
  }
}

// The report's times: each phase from the end of the one before it, the
// whole install from its start.
class PhaseTimer
{
public:
  PhaseTimer(InstallReport& report, std::chrono::steady_clock::time_point started)
    : m_report(report), m_started(started), m_phase_start(started)
  {
  }
  void end_phase(std::string name)
  {
    const auto t = std::chrono::steady_clock::now();
    m_report.phases.push_back({std::move(name), std::chrono::duration<double>(t - m_phase_start).count()});
    m_phase_start = t;
  }
  InstallReport finish()
  {
    m_report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
    return m_report;
  }

private:
  InstallReport& m_report;
  std::chrono::steady_clock::time_point m_started;
  std::chrono::steady_clock::time_point m_phase_start;
};

// The version installed for this bundle on this very host, when it is whole
// (its environment recorded under this policy, its kind links in place):
// then reported in place, with the variables the policy refuses, and the
// host is not probed.
std::optional<InstalledMarker>
in_place_for_unchanged_host(const fs::path& root, const VerifiedBundle& verified, const std::string& fingerprint,
                            const std::set<std::string, std::less<>>& allowed_environment, InstallReport& report)
{
  auto installed = unchanged_host_install(root, verified.manifest_sha256, fingerprint);
  if (!installed || !environment_recorded(versions_dir(root) / installed->version, allowed_environment) ||
      !kind_links_point_at(root, installed->version, kind_names(*installed))) {
    return std::nullopt;
  }
  std::vector<std::string> refused;
  for (const auto& slice : verified.manifest.slices) {
    if (std::ranges::find(installed->slice_ids, slice.id) != installed->slice_ids.end()) {
      auto more = refused_variables(slice, allowed_environment);
      refused.insert(refused.end(), more.begin(), more.end());
    }
  }
  report_in_place(root, *installed, std::move(refused), report);
  return installed;
}

// The marker of the version this install makes, but for its kinds and its
// id: known once it is staged.
InstalledMarker
marker_for_new_version(const VerifiedBundle& verified, SysSeconds now, const std::string& fingerprint,
                       const std::vector<std::string>& selected_ids)
{
  InstalledMarker new_marker;
  new_marker.manifest_sha256 = verified.manifest_sha256;
  new_marker.channel = verified.manifest.channel;
  new_marker.serial = verified.manifest.serial;
  new_marker.installed_at = now;
  new_marker.host_fingerprint = fingerprint;
  new_marker.slice_ids = selected_ids;
  return new_marker;
}

// Under the lock, with the checks passed: the selected slices extracted into
// a staging directory and made ready there, published as the new version
// and switched to (commit_and_record), earlier versions retired, the start
// record written. The staging directory is removed on every path out.
Status
install_new_version(const fs::path& bundle_dir, const VerifiedBundle& verified, const fs::path& root,
                    const SliceSelection& selection, InstalledMarker new_marker, const InstallOptions& options,
                    ChannelState state, const std::vector<std::string>& previous_kinds, InstallReport& report,
                    PhaseTimer& timer)
{
  PW_ASSIGN(const auto staging, make_private_directory(meta_dir(root), k_staging_prefix));
  StagingGuard staging_guard(staging);
  UniqueFd staging_fd(::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!staging_fd) {
    return fail(io_error("cannot open", staging, errno));
  }

  PW_TRY(extract_selected_slices(bundle_dir, selection, staging_fd.get(), options.limits));
  timer.end_phase("extract");

  // The version's name is known before it is published: Triton's group files
  // name the version's own directories.
  const auto id = new_version_id(verified.manifest_sha256, staging);
  PW_ASSIGN(auto staged, prepare_staged_version(staging_fd.get(), staging, selection, versions_dir(root) / id,
                                                options.verify.policy.install_owner, options.sync));
  const auto& kinds = staged.kinds;
  timer.end_phase("sync");

  new_marker.kinds = std::move(staged.counts);
  new_marker.version = id;
  PW_TRY(commit_and_record(root, staging, staging_fd.get(), id, kinds, verified, new_marker,
                           audit::serialize(staged.inventory, &staged.states), options.verify.policy.allowed_environment,
                           std::move(state), report.commits));
  report.version = id;
  timer.end_phase("commit");
  staging_fd.reset();
  staging_guard.remove();
  retire_earlier_versions(root, id, kinds, previous_kinds);
  record_start(root, verified, options.verify.policy);
  timer.end_phase("cleanup");
  return {};
}

} // namespace

bool
holds_bundle_for_unchanged_host(const fs::path& root, const VerifiedBundle& verified, const HostSource& host)
{
  const std::string fingerprint = host.fingerprint ? host.fingerprint(framework_search(verified.manifest)) : "";
  return unchanged_host_install(root, verified.manifest_sha256, fingerprint).has_value();
}

bool
holds_bundle(const fs::path& root, const VerifiedBundle& verified, const std::vector<std::string>& selected_ids)
{
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  return root_fd && installed_already(root_fd.get(), root, verified.manifest_sha256, selected_ids, Announce::quiet);
}

Result<InstallReport>
install_bundle(const fs::path& bundle_dir, const bundle::TrustStore& trust, const fs::path& root,
               const HostSource& host, const InstallOptions& options)
{
  std::error_code ec;
  if (auto recorded = recorded_install(bundle_dir, trust, fs::absolute(root, ec).lexically_normal(), host, options)) {
    return std::move(*recorded);
  }
  PW_ASSIGN(auto verified, verify_manifest(bundle_dir, trust, options.now.value_or(now_seconds()), options.verify));
  return install_verified_bundle(bundle_dir, std::move(verified), root, host, options);
}

Result<InstallReport>
install_verified_bundle(const fs::path& bundle_dir, VerifiedBundle verified, const fs::path& root_in,
                        const HostSource& host, const InstallOptions& options,
                        std::optional<SliceSelection> selection)
{
  const auto started = std::chrono::steady_clock::now();
  const SysSeconds now = options.now.value_or(now_seconds());
  std::error_code ec;
  const fs::path root = fs::absolute(root_in, ec).lexically_normal();

  InstallReport report;
  PhaseTimer timer(report, started);
  report.root = root;
  report.manifest_sha256 = verified.manifest_sha256;
  report.channel = verified.manifest.channel;
  report.serial = verified.manifest.serial;
  report.signer_key_ids = verified.signer_key_ids;
  report.warnings = verified.warnings;

  // The cheap check first: with nothing to do, the host probe is the whole cost.
  const std::string fingerprint = host.fingerprint ? host.fingerprint(framework_search(verified.manifest)) : "";
  if (const auto installed =
        in_place_for_unchanged_host(root, verified, fingerprint, options.verify.policy.allowed_environment, report)) {
    timer.end_phase("verify");
    record_start_unless_recorded(root, installed->version, verified, options.verify.policy);
    return timer.finish();
  }
  if (!fingerprint.empty()) {
    log::verbose("host fingerprint {} not the install's: probing the host", fingerprint);
  }
  if (!selection) { // else the caller's, from this manifest for this host
    PW_ASSIGN(const auto host_devices, host.probe(framework_search(verified.manifest)));
    log::verbose("host devices:\n{}", host::describe_host(host_devices));
    PW_ASSIGN(selection, select_slices(verified.manifest, host_devices, options.waived_requirements));
  }

  timer.end_phase("verify");
  const auto [selected_ids, needed] = report_selection(*selection, options, report);

  PW_ASSIGN(UniqueFd root_fd, prepare_root(root));
  auto locked = InstallLock::acquire(meta_dir(root) / k_lock_file, options.lock_timeout);
  if (!locked) {
    // A read-only root (a volume mounted ro) that already holds this bundle
    // needs no lock, whose file cannot be opened there. The marker is
    // replaced atomically, so reading it unlocked is sound.
    if (installed_already(root_fd.get(), root, verified.manifest_sha256, selected_ids, Announce::quiet)) {
      report.outcome = InstallOutcome::already_installed;
      return timer.finish();
    }
    return fail(std::move(locked).error());
  }
  auto lock = std::move(*locked);
  remove_stale_staging(root);
  timer.end_phase("lock");

  // Another channel's caches are never replaced silently (channel_guard.hpp).
  // A marker that does not parse holds nothing, as for installed_already().
  const auto marker = read_marker(root);
  PW_TRY(check_channel_occupancy(marker ? *marker : std::nullopt, verified.manifest, root, options.channels));
  if (installed_already(root_fd.get(), root, verified.manifest_sha256, selected_ids, Announce::why_not)) {
    report.outcome = InstallOutcome::already_installed;
    if (marker && *marker) {
      tend_current_version(root, **marker, fingerprint, options.verify.policy.allowed_environment, report);
      record_start_unless_recorded(root, (*marker)->version, verified, options.verify.policy);
    }
    return timer.finish();
  }

  PW_ASSIGN(auto state, read_state(root));
  PW_TRY(check_rollback(state, verified));
  PW_TRY(check_free_space(root_fd.get(), root, needed, options.space_margin));
  PW_TRY(install_new_version(bundle_dir, verified, root, *selection,
                             marker_for_new_version(verified, now, fingerprint, selected_ids), options, std::move(state),
                             marker && *marker ? kind_names(**marker) : std::vector<std::string>{}, report, timer));
  return timer.finish();
}

Result<InstallReport>
install_bundle(const fs::path& bundle_dir, const bundle::TrustStore& trust, const fs::path& root,
               std::span<const host::HostDevice> host_devices, const InstallOptions& options)
{
  const std::vector<host::HostDevice> devices(host_devices.begin(), host_devices.end());
  const HostSource given{[&](const host::FrameworkSearch&) -> Result<std::vector<host::HostDevice>> { return devices; },
                         {}};
  return install_bundle(bundle_dir, trust, root, given, options);
}

} // namespace prewarm::install
