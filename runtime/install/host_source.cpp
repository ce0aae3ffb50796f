// SPDX-License-Identifier: Apache-2.0
#include "install/host_source.hpp"

#include "base/device_properties.hpp"
#include "host/host_fingerprint.hpp"
#include "host/probe_host.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>

namespace prewarm::install {

host::FrameworkSearch
framework_search(const bundle::BundleManifest& manifest)
{
  host::FrameworkSearch search;
  search.wanted = false;
  for (const auto& slice : manifest.slices) {
    const bool requires_frameworks = std::any_of(slice.requirements.begin(), slice.requirements.end(), [](const auto& r) {
      return r.key.starts_with(prop::framework_prefix);
    });
    if (!requires_frameworks) {
      continue;
    }
    search.wanted = true;
    for (const auto& dir : slice.site_packages) {
      if (std::find(search.site_packages.begin(), search.site_packages.end(), dir) == search.site_packages.end()) {
        search.site_packages.emplace_back(dir);
      }
    }
  }
  return search;
}

HostSource
probed_host()
{
  const auto options_for = [](const host::FrameworkSearch& search) {
    host::HostProbeOptions options;
    options.frameworks = search;
    return options;
  };
  return {[options_for](const host::FrameworkSearch& search) { return host::probe_host(options_for(search)); },
          [options_for](const host::FrameworkSearch& search) { return host::host_fingerprint(options_for(search)); }};
}

HostSource
asked_once(HostSource host)
{
  auto probed = std::make_shared<std::optional<Result<std::vector<host::HostDevice>>>>();
  // One bundle per install or pull: the search is the same each time.
  auto probe = [probe = std::move(host.probe), probed](const host::FrameworkSearch& search)
    -> Result<std::vector<host::HostDevice>> {
    if (!*probed) {
      *probed = probe(search);
    }
    return **probed;
  };
  if (!host.fingerprint) {
    return {std::move(probe), {}};
  }
  auto fingerprints = std::make_shared<std::array<std::optional<std::string>, 2>>(); // without, with frameworks
  auto fingerprint = [fingerprint = std::move(host.fingerprint), fingerprints](const host::FrameworkSearch& search) {
    auto& known = (*fingerprints)[search.wanted ? 1 : 0];
    if (!known) {
      known = fingerprint(search);
    }
    return *known;
  };
  return {std::move(probe), std::move(fingerprint)};
}

} // namespace prewarm::install
