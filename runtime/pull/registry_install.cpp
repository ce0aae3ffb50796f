// SPDX-License-Identifier: Apache-2.0
#include "pull/registry_install.hpp"

#include "base/log.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

namespace prewarm::pull {

Result<install::InstallReport>
install_from_registry(const RegistrySource& source, PullRequest request, const std::filesystem::path& root,
                      const install::InstallOptions& options)
{
  const auto started = std::chrono::steady_clock::now();
  // One probe at most, and none when the root holds the bundle for this host.
  request.host = install::asked_once(std::move(request.host));
  request.install_root = root;
  const auto pull = [&]() -> Result<PulledBundle> {
    return source.names == RegistrySource::Names::image_it_refers_to
             ? pull_bundle_referring_to(source.reference, request)
             : pull_bundle(source.reference, request);
  };
  auto pulled = pull();
  PW_TRY(pulled);
  const auto& slices = pulled->slices_fetched;
  log::info("fetched {} ({}; {} bytes) in {:.3f} s", pulled->reference.to_string(),
            slices.empty() ? std::string("no slice")
                           : fmt::format("{} slice{}: {}", slices.size(), slices.size() == 1 ? "" : "s",
                                         fmt::join(slices, ", ")),
            pulled->bytes_received, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  auto report = install::install_verified_bundle(pulled->dir, std::move(pulled->verified), root, request.host,
                                                 options, std::move(pulled->selection));
  if (!report && pulled->already_installed && report.error().category() != Errc::verify) {
    // The root changed between the unlocked look and the locked one (another
    // installer, a cache directory removed): fetch the slices after all.
    log::info("{} is no longer installed under {}: fetching its slices", pulled->reference.to_string(),
              root.string());
    (void)discard_download(*pulled);
    request.install_root.clear();
    pulled = pull();
    PW_TRY(pulled);
    report = install::install_verified_bundle(pulled->dir, std::move(pulled->verified), root, request.host, options,
                                              std::move(pulled->selection));
  }
  if (report || report.error().category() == Errc::verify) {
    // Installed, or refused for good: nothing here is worth resuming.
    if (auto removed = discard_download(*pulled); !removed) {
      log::warn("{}", removed.error().message());
    }
  }
  return report;
}

} // namespace prewarm::pull
