// SPDX-License-Identifier: Apache-2.0
// A driver API's device enumeration run in a forked child with a deadline
// (run_isolated): the devices come back as host-description JSON, or "!" and
// the reason when there is nothing to enumerate (no ICD, no driver). Shared
// by the OpenCL and Level Zero sources of the host probe.
#pragma once

#include "base/error.hpp"
#include "host/host_device.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::host {

// What a driver enumeration in a forked child found: the text `enumerate`
// returned, or the message of its error (nothing to enumerate).
struct IsolatedListing
{
  bool found = true; // false: `enumerate` failed, and `text` says why
  std::string text;
};

// Runs `enumerate` in a forked child (run_isolated) with a usable HOME
// (private_home.hpp: PoCL needs one). A crash or hang of the child is an
// error. The builder's host probe uses it with its own listing format.
Result<IsolatedListing> list_isolated(const std::function<Result<std::string>()>& enumerate,
                                      std::chrono::milliseconds timeout);

// `enumerate` runs in the child. Its error (nothing to enumerate) is an empty
// list, logged verbosely under `source` ("OpenCL"); a crash or hang of the
// child is an error.
Result<std::vector<HostDevice>> enumerate_isolated(std::string_view source,
                                                   const std::function<Result<std::vector<HostDevice>>()>& enumerate,
                                                   std::chrono::milliseconds timeout);

} // namespace prewarm::host
