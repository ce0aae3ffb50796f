// SPDX-License-Identifier: Apache-2.0
// The host as an install asks about it: its devices (the probe) and its
// fingerprint, each asked with what the bundle needs of the application's
// frameworks; the real probe, and the same source asking each at most once.
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "host/framework_probe.hpp"
#include "host/host_device.hpp"

#include <functional>
#include <string>
#include <vector>

namespace prewarm::install {

// The host, probed only when the install needs its devices: a repeated
// install on an unchanged host (the marker holds this fingerprint) is done
// without the probe, which is most of its time.
// Both are asked with what the bundle needs of the application's frameworks
// (framework_search(): whether any slice requires framework.*, and where the
// build found them).
struct HostSource
{
  std::function<Result<std::vector<host::HostDevice>>(const host::FrameworkSearch&)> probe;
  // The fingerprint of this host; empty function: none (always probe, and
  // the marker records none).
  std::function<std::string(const host::FrameworkSearch&)> fingerprint;
};

// What the slices of this bundle need of the application's frameworks: wanted
// when one requires a framework.* key, and the site-packages directories
// those slices recorded (host/framework_probe.hpp).
host::FrameworkSearch framework_search(const bundle::BundleManifest& manifest);

// The host probe (host/probe_host.hpp) behind its fingerprint.
HostSource probed_host();

// The same host source, probing at most once and computing each fingerprint
// at most once however often it is asked (a registry pull checks the root and
// selects slices, then the install does both again; a fingerprint with
// frameworks costs a Python start).
HostSource asked_once(HostSource host);

} // namespace prewarm::install
