// SPDX-License-Identifier: Apache-2.0
// Which ocloc serves an Intel target. A build host may carry two Intel
// toolchains: its own (Debian 12: ocloc 22.43, no Battlemage, Meteor, Lunar
// or Panther Lake) and the Intel root, a Debian sid root holding compute
// runtime 26.27 that the host runs through the root's own dynamic loader
// (`./setup.sh intel-root`; README.md, "Intel toolchains").
//
// Precedence, first match wins:
//   1. PREWARM_OCLOC=<executable>: that ocloc alone, for every target (an
//      explicit choice is never second-guessed: a target it does not know
//      is skipped, not handed to another toolchain);
//   2. the host's ocloc: `ocloc` on PATH, else /usr/bin/ocloc;
//   3. the Intel root's ocloc, <root>/host-bin/ocloc, where <root> is
//      $PREWARM_INTEL_ROOT (default /var/cache/prewarm/intel-sid;
//      PREWARM_INTEL_ROOT=none leaves it out), used once <root>/.complete
//      (written last when the root is made) is there.
// Each target is served by the first of these whose `ocloc ids` knows its
// ocloc device. The host's comes first because it is the release the host's
// own driver would load; a zebin is required at install to match the driver
// release that made it (aot_executor.hpp), so which toolchain served a target
// decides which hosts can take its slice: the plan says which, and why.
#pragma once

#include "aot/ocloc.hpp"
#include "base/error.hpp"
#include "manifest/plan.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::aot {

inline constexpr std::string_view k_intel_root_variable = "PREWARM_INTEL_ROOT";
inline constexpr std::string_view k_default_intel_root = "/var/cache/prewarm/intel-sid";

// $PREWARM_INTEL_ROOT or the default; empty when PREWARM_INTEL_ROOT=none.
std::filesystem::path intel_root();
// Whether `root` is complete: its .complete stamp and host-bin/ocloc are there.
bool intel_root_complete(const std::filesystem::path& root);

struct Toolchain
{
  Ocloc ocloc;
  std::string origin; // "PREWARM_OCLOC", "host", "Intel root /var/cache/prewarm/intel-sid"
  manifest::OclocSource source = manifest::OclocSource::host;
};

// The toolchains in precedence order (above); those that cannot run are
// left out with a verbose log line. Empty when there is none.
std::vector<Toolchain> locate_toolchains();

// "ocloc 26.27.039122 (Intel root /var/cache/prewarm/intel-sid)".
std::string describe(const Toolchain& toolchain);

// Thread-safe: locates the toolchains at the first call and remembers which
// one knows each device, so a build's parallel AOT jobs ask `ocloc ids` once
// per device.
class ToolchainChooser
{
public:
  // The toolchain that serves `device`: E_AOT_UNKNOWN_DEVICE naming every
  // toolchain tried when none knows it, E_OCLOC_MISSING when there is none.
  Result<const Toolchain*> for_device(std::string_view device);

private:
  std::mutex m_mutex;
  bool m_located = false;
  std::vector<Toolchain> m_toolchains;
  std::map<std::string, std::size_t, std::less<>> m_chosen; // device -> index
};

} // namespace prewarm::aot
